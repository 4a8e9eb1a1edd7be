package harness

import (
	"errors"
	"io"
	"net"
	"sync"
	"testing"
)

// Proxy forwards TCP connections from a free port on 127.0.0.1 to a target
// address. Block cuts every connection and refuses new ones, as a network
// partition would, while the target keeps running; Unblock heals it.
type Proxy struct {
	// Addr is the proxy's 127.0.0.1:<port>.
	Addr   string
	target string
	ln     net.Listener

	mu      sync.Mutex
	blocked bool
	conns   map[net.Conn]struct{} // both sides of every live connection
	wg      sync.WaitGroup
}

// StartProxy listens on a free port and forwards to target (host:port)
// until the test ends.
func StartProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy: %v", err)
	}
	p := &Proxy{Addr: ln.Addr().String(), target: target, ln: ln, conns: map[net.Conn]struct{}{}}
	p.wg.Go(p.accept)
	t.Cleanup(p.close)
	return p
}

// URL returns http://Addr, for an etcd endpoint behind the proxy.
func (p *Proxy) URL() string { return "http://" + p.Addr }

// Block closes every connection through the proxy and makes it close new
// ones at once.
func (p *Proxy) Block() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.blocked = true
	for c := range p.conns {
		c.Close()
	}
}

// Unblock lets new connections through again.
func (p *Proxy) Unblock() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.blocked = false
}

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			continue
		}
		p.wg.Go(func() { p.forward(c) })
	}
}

// forward copies bytes both ways between c and a new connection to the
// target until either side closes.
func (p *Proxy) forward(c net.Conn) {
	upstream, err := p.dial()
	if err != nil {
		c.Close()
		return
	}
	if !p.track(c, upstream) {
		return
	}
	defer p.untrack(c, upstream)
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(upstream, c)
	go pipe(c, upstream)
	<-done
	c.Close()
	upstream.Close()
	<-done
}

func (p *Proxy) dial() (net.Conn, error) {
	p.mu.Lock()
	blocked := p.blocked
	p.mu.Unlock()
	if blocked {
		return nil, errors.New("blocked")
	}
	return net.Dial("tcp", p.target)
}

// track registers a connection pair, or closes it when the proxy was
// blocked meanwhile.
func (p *Proxy) track(c, upstream net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.blocked || p.conns == nil {
		c.Close()
		upstream.Close()
		return false
	}
	p.conns[c], p.conns[upstream] = struct{}{}, struct{}{}
	return true
}

func (p *Proxy) untrack(c, upstream net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, c)
	delete(p.conns, upstream)
}

// close stops accepting, closes every connection and waits for the
// forwarding goroutines.
func (p *Proxy) close() {
	p.ln.Close()
	p.mu.Lock()
	for c := range p.conns {
		c.Close()
	}
	p.conns = nil
	p.mu.Unlock()
	p.wg.Wait()
}
