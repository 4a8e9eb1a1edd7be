// Package sockhold keeps a node-local skydns's UDP sockets, and the
// queries queued in them, alive and answered while no skydns runs.
//
// A holder is a peer of package sockshare that shares no socket of its
// own: it keeps copies of the skydns's UDP sockets. When that skydns dies
// (kill -9, an OOM kill) its sockets stay in the port's SO_REUSEPORT group,
// held open here, and the holder answers every query that reaches them by
// forwarding it, unchanged, to Upstream (the kube-dns Service) and sending
// the reply back through the same socket, from the node-local address.
// When a skydns attaches again, the holder connects the adopted sockets to
// their own address (the kernel then sends them nothing new), forwards
// what they still hold until they stay empty for Quiet, and closes them.
//
// The holder holds no zone and no etcd client, and no descriptor but
// copies: when it dies itself, the skydns still holds its sockets and loses
// nothing; the restarted holder takes new copies from it.
package sockhold

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kubesky/kubesky/skydns/sockshare"
)

// Quiet is how long released sockets must stay empty before they close.
const Quiet = 200 * time.Millisecond

// forwardTimeout bounds one forwarded query's wait for the upstream reply.
const forwardTimeout = 2 * time.Second

// maxMessage is the largest UDP DNS message read or relayed.
const maxMessage = 65535

// maxInFlight bounds the queries forwarded at once (each holds a reply
// buffer of maxMessage): beyond it, queries wait in their socket's queue.
const maxInFlight = 128

// Config is where the holder meets the skydns and where it forwards.
type Config struct {
	// Dir is the directory shared with the skydns (its --node-local-peers).
	Dir string
	// Upstream is the DNS server queries are forwarded to while no skydns
	// runs, as ip:port.
	Upstream netip.AddrPort
	Logger   *slog.Logger
}

// Holder holds the skydns's sockets; see the package doc.
type Holder struct {
	cfg    Config
	sharer *sockshare.Sharer

	mu       sync.Mutex
	attached int           // skydns processes whose sockets are held now
	release  chan struct{} // closed when a skydns attaches

	forwarded atomic.Int64
}

// Start listens in cfg.Dir and takes copies of the sockets of every skydns
// there, now and later.
func Start(cfg Config) (*Holder, error) {
	if !cfg.Upstream.IsValid() || cfg.Upstream.Port() == 0 {
		return nil, fmt.Errorf("holding sockets: upstream %q is not ip:port", cfg.Upstream)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	h := &Holder{cfg: cfg, release: make(chan struct{})}
	s, err := sockshare.Start(sockshare.Config{Dir: cfg.Dir, Holder: true, Attached: h.onAttached, Adopt: h.adopt, Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	h.sharer = s
	return h, nil
}

// Forwarded is the number of queries whose upstream reply was relayed so far.
func (h *Holder) Forwarded() int64 { return h.forwarded.Load() }

// Close stops holding: sockets being answered here are released (connected
// to themselves, drained, closed) first.
func (h *Holder) Close() error { return h.sharer.Close() }

func (h *Holder) onAttached() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.attached++
	close(h.release)
	h.release = make(chan struct{})
}

// adopt answers a gone skydns's sockets by forwarding until another skydns
// attaches or the holder closes, then releases them.
func (h *Holder) adopt(ctx context.Context, conns []*net.UDPConn) {
	h.mu.Lock()
	h.attached--
	release, othersAttached := h.release, h.attached > 0
	h.mu.Unlock()
	f := &forwarder{upstream: h.cfg.Upstream, forwarded: &h.forwarded, slots: make(chan struct{}, maxInFlight)}
	f.last.Store(time.Now().UnixNano())
	for _, c := range conns {
		f.readers.Go(func() { f.serve(c) })
	}
	h.cfg.Logger.Info("holding a gone skydns's sockets: forwarding their queries", "sockets", len(conns), "upstream", h.cfg.Upstream)
	if !othersAttached {
		select {
		case <-release:
		case <-ctx.Done():
		}
	}
	err := f.release(conns)
	h.cfg.Logger.Info("released a gone skydns's sockets", "forwarded", h.forwarded.Load(), "err", err)
}

// forwarder answers the queries of held sockets through the upstream.
type forwarder struct {
	upstream  netip.AddrPort
	forwarded *atomic.Int64
	last      atomic.Int64  // UnixNano of the last query read
	slots     chan struct{} // one per query being forwarded
	readers   sync.WaitGroup
	inFlight  sync.WaitGroup
}

// serve reads c until it is closed, forwarding each query.
func (f *forwarder) serve(c *net.UDPConn) {
	buf := make([]byte, maxMessage)
	for {
		n, client, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		f.last.Store(time.Now().UnixNano())
		query := append([]byte(nil), buf[:n]...)
		f.slots <- struct{}{}
		f.inFlight.Go(func() {
			defer func() { <-f.slots }()
			f.forward(c, client, query)
		})
	}
}

// forward sends query upstream and the reply to client through c; a query
// whose reply does not come is dropped (the client asks again).
func (f *forwarder) forward(c *net.UDPConn, client netip.AddrPort, query []byte) {
	up, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(f.upstream))
	if err != nil {
		return
	}
	defer up.Close()
	up.SetDeadline(time.Now().Add(forwardTimeout))
	if _, err := up.Write(query); err != nil {
		return
	}
	reply := make([]byte, maxMessage)
	n, err := up.Read(reply)
	if err != nil || n < 2 || reply[0] != query[0] || reply[1] != query[1] {
		return
	}
	// Counted before the reply leaves, so a client that has its answer
	// always finds it counted.
	f.forwarded.Add(1)
	c.WriteToUDPAddrPort(reply[:n], client)
}

// release connects conns to their own addresses, answers what they still
// hold until none has read a query for Quiet, and closes them.
func (f *forwarder) release(conns []*net.UDPConn) error {
	err := connectToSelf(conns)
	tick := time.NewTicker(Quiet / 10)
	defer tick.Stop()
	start := time.Now()
	for range tick.C {
		if time.Since(start) >= Quiet && time.Since(time.Unix(0, f.last.Load())) >= Quiet {
			break
		}
	}
	f.inFlight.Wait()
	for _, c := range conns {
		c.Close()
	}
	f.readers.Wait()
	return err
}

// connectToSelf connects each socket to its own address: SO_REUSEPORT's
// choice then skips it, and only what it already queued is read from it.
func connectToSelf(conns []*net.UDPConn) error {
	var errs []error
	for _, c := range conns {
		rc, err := c.SyscallConn()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var cerr error
		err = rc.Control(func(fd uintptr) {
			self, err := unix.Getsockname(int(fd))
			if err != nil {
				cerr = err
				return
			}
			cerr = unix.Connect(int(fd), self)
		})
		errs = append(errs, err, cerr)
	}
	return errors.Join(errs...)
}
