package harness

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// peerHeadLimit bounds the bytes a peer proxy reads to find a connection's
// first HTTP request head; peerHeadTimeout bounds the wait for them.
const (
	peerHeadLimit   = 4096
	peerHeadTimeout = 10 * time.Second
)

// sourceHeader is the header etcd's peer transport puts on every request,
// naming the sending member's ID in hex.
var sourceHeader = []byte("x-server-from:")

// Proxy forwards TCP connections from a free port on 127.0.0.1 to a target
// address. Block cuts every connection and refuses new ones, as a network
// partition would, while the target keeps running; Unblock heals it.
//
// A peer proxy (StartPeerProxy), in front of an etcd member's peer port,
// also knows which member each connection comes from, by the
// X-Server-From header of its first HTTP request, and can cut one source
// only: a partition of member m is every source cut at m's proxy and m's
// ID cut at every other member's (EtcdCluster.Partition).
type Proxy struct {
	// Addr is the proxy's 127.0.0.1:<port>.
	Addr    string
	target  string
	ln      net.Listener
	sourced bool // read each connection's source

	mu    sync.Mutex
	cut   map[string]bool      // sources refused; "" refuses every source
	conns map[net.Conn]proxied // the client side of every live connection
	wg    sync.WaitGroup
}

// proxied is one forwarded connection's source and target side.
type proxied struct {
	source   string
	upstream net.Conn
}

// StartProxy listens on a free port and forwards to target (host:port)
// until the test ends.
func StartProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	return startProxy(t, target, false)
}

// StartPeerProxy is StartProxy for an etcd member's peer port, able to
// Cut one source.
func StartPeerProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	return startProxy(t, target, true)
}

func startProxy(t testing.TB, target string, sourced bool) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy: %v", err)
	}
	p := &Proxy{Addr: ln.Addr().String(), target: target, ln: ln, sourced: sourced,
		cut: map[string]bool{}, conns: map[net.Conn]proxied{}}
	p.wg.Go(p.accept)
	t.Cleanup(p.close)
	return p
}

// URL returns http://Addr, for an etcd endpoint behind the proxy.
func (p *Proxy) URL() string { return "http://" + p.Addr }

// Block closes every connection through the proxy and makes it close new
// ones at once.
func (p *Proxy) Block() { p.Cut("") }

// Unblock lets new connections through again.
func (p *Proxy) Unblock() { p.Mend("") }

// Cut closes every connection from source (a member ID in hex, known only
// to a peer proxy; "" for every source) and refuses new ones until Mend.
func (p *Proxy) Cut(source string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut[source] = true
	for c, conn := range p.conns {
		if source == "" || conn.source == source {
			c.Close()
			conn.upstream.Close()
		}
	}
}

// Mend lets connections from source through again.
func (p *Proxy) Mend(source string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.cut, source)
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
	var in io.Reader = c
	source := ""
	if p.sourced {
		head := bufio.NewReaderSize(c, peerHeadLimit)
		_ = c.SetReadDeadline(time.Now().Add(peerHeadTimeout))
		source, in = readSource(head), head
		_ = c.SetReadDeadline(time.Time{})
	}
	upstream, err := p.dial(source)
	if err != nil {
		c.Close()
		return
	}
	if !p.track(c, proxied{source: source, upstream: upstream}) {
		return
	}
	defer p.untrack(c)
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(upstream, in); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, upstream); done <- struct{}{} }()
	<-done
	c.Close()
	upstream.Close()
	<-done
}

// readSource returns the X-Server-From value of the request head at the
// start of in, without consuming it, or "" when there is none.
func readSource(in *bufio.Reader) string {
	_, err := in.Peek(1) // waits for the first bytes
	head, _ := in.Peek(in.Buffered())
	for err == nil && !bytes.Contains(head, []byte("\r\n\r\n")) && len(head) < peerHeadLimit {
		_, err = in.Peek(len(head) + 1) // waits for more
		head, _ = in.Peek(in.Buffered())
	}
	for line := range bytes.Lines(head) {
		if len(line) > len(sourceHeader) && bytes.EqualFold(line[:len(sourceHeader)], sourceHeader) {
			return string(bytes.TrimSpace(line[len(sourceHeader):]))
		}
	}
	return ""
}

func (p *Proxy) dial(source string) (net.Conn, error) {
	p.mu.Lock()
	refused := p.refuses(source)
	p.mu.Unlock()
	if refused {
		return nil, errors.New("blocked")
	}
	return net.Dial("tcp", p.target)
}

// refuses reports whether connections from source are cut; p.mu must be
// held.
func (p *Proxy) refuses(source string) bool { return p.cut[""] || p.cut[source] }

// track registers a connection pair, or closes it when the proxy was
// closed or its source cut meanwhile.
func (p *Proxy) track(c net.Conn, conn proxied) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns == nil || p.refuses(conn.source) {
		c.Close()
		conn.upstream.Close()
		return false
	}
	p.conns[c] = conn
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, c)
}

// close stops accepting, closes every connection and waits for the
// forwarding goroutines.
func (p *Proxy) close() {
	p.ln.Close()
	p.mu.Lock()
	for c, conn := range p.conns {
		c.Close()
		conn.upstream.Close()
	}
	p.conns = nil
	p.mu.Unlock()
	p.wg.Wait()
}
