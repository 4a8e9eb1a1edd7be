package dnsserver

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/skydns/fastpath"
)

// DrainQuiet is how long the UDP sockets must stay empty, after another
// server took over the address, before StepAside returns.
const DrainQuiet = 200 * time.Millisecond

// probeTimeout bounds one probe query; probeAttempts are sent at most.
const (
	probeTimeout  = 250 * time.Millisecond
	probeAttempts = 3
)

// sockets are the UDP sockets StepAside acts on.
type sockets interface {
	// connect connects every socket to its own address: the kernel's
	// SO_REUSEPORT selection then skips them, and new queries go to the
	// other sockets of the port, while those already queued stay.
	connect() error
	// disconnect undoes connect (connect to AF_UNSPEC).
	disconnect() error
	// queued reports whether any socket (or the fast path's queue) holds
	// a query not yet read.
	queued() (bool, error)
}

// sockets are the server's UDP sockets, with the fast path's queue if any.
func (s *Server) sockets() sockets {
	if s.fast != nil {
		return withFallback{udpSockets(s.conns), s.fast}
	}
	return udpSockets(s.conns)
}

// withFallback are the fast path's sockets, which hold queries in the
// fast path's queue for the ordinary path too.
type withFallback struct {
	udpSockets
	fast *fastpath.Server
}

func (w withFallback) queued() (bool, error) {
	busy, err := w.udpSockets.queued()
	return busy || w.fast.Queued() > 0, err
}

// StepAside hands the address over to another server sharing its port
// (node-local mode, ReusePort): it connects the UDP sockets to their own
// address, so the kernel sends new queries to the other server's sockets
// only, and asks the address a query from a fresh socket. If an answer
// comes, someone else serves: StepAside reads and answers what is still
// queued until the sockets have stayed empty for DrainQuiet, and returns
// true; Shutdown should follow at once. If none comes, nobody else is
// there: the sockets are disconnected and serve as before, and StepAside
// returns false. The TCP listener is untouched. Addr must have named its
// port: Linux releases a port it chose (port 0) when a socket bound to it
// disconnects.
func (s *Server) StepAside(ctx context.Context) (bool, error) {
	if !s.portNamed {
		return false, fmt.Errorf("stepping aside on %s: the port was chosen by the kernel, and a disconnect would release it", s.addr)
	}
	probe := func(ctx context.Context) error { return Probe(ctx, s.addr) }
	handed, err := stepAside(ctx, s.sockets(), probe, DrainQuiet)
	switch {
	case err != nil:
		s.logger.Error("stepping aside failed: serving on", "addr", s.addr, "err", err)
	case !handed:
		s.logger.Info("stepping aside: no other server answers, serving on", "addr", s.addr)
	default:
		s.logger.Info("stepped aside: another server answers, queued queries answered", "addr", s.addr)
	}
	return handed, err
}

// stepAside is StepAside's decision: connect, probe, then drain (true)
// or disconnect (false).
func stepAside(ctx context.Context, socks sockets, probe func(context.Context) error, quiet time.Duration) (bool, error) {
	if err := socks.connect(); err != nil {
		return false, errors.Join(fmt.Errorf("connecting the UDP sockets to their address: %w", err), socks.disconnect())
	}
	if err := probe(ctx); err != nil {
		if err := socks.disconnect(); err != nil {
			return false, fmt.Errorf("disconnecting the UDP sockets: %w", err)
		}
		return false, nil
	}
	return true, drain(ctx, socks, quiet)
}

// drain waits until the sockets have held nothing for quiet, or ctx ends.
func drain(ctx context.Context, socks sockets, quiet time.Duration) error {
	tick := time.NewTicker(quiet / 20)
	defer tick.Stop()
	emptySince := time.Now()
	for {
		busy, err := socks.queued()
		if err != nil {
			return fmt.Errorf("draining the UDP sockets: %w", err)
		}
		if busy {
			emptySince = time.Now()
		} else if time.Since(emptySince) >= quiet {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("draining the UDP sockets: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// Probe asks addr (host:port) "id.server. CH TXT" over UDP from a fresh
// socket, up to three times, and returns nil once any answer comes back:
// then some server answers there.
func Probe(ctx context.Context, addr string) error {
	q := new(dns.Msg)
	q.SetQuestion("id.server.", dns.TypeTXT)
	q.Question[0].Qclass = dns.ClassCHAOS
	c := &dns.Client{Net: "udp", Timeout: probeTimeout}
	var err error
	for range probeAttempts {
		if _, _, err = c.ExchangeContext(ctx, q, addr); err == nil || ctx.Err() != nil || refused(err) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("probing %s: %w", addr, err)
	}
	return nil
}

// refused reports a port unreachable: nobody listens, no need to ask again.
func refused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED)
}
