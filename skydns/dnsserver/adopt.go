package dnsserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// adoptShutdown bounds the answers in progress when an adoption ends.
const adoptShutdown = 2 * time.Second

// UDPConns are the server's UDP sockets, which node-local mode shares
// with the other servers of its port (package sockshare). They stay the
// server's: the caller must not close them.
func (s *Server) UDPConns() []*net.UDPConn { return s.conns }

// Adopt answers the queries queued in conns, the UDP sockets of another
// server on this port that is gone (package sockshare), and closes them.
// It connects them to their own address, as StepAside does, so the kernel
// sends them nothing new, and answers what they hold on the ordinary path
// until they have stayed empty for DrainQuiet, or ctx ends.
func (s *Server) Adopt(ctx context.Context, conns []*net.UDPConn) error {
	socks := udpSockets(conns)
	connectErr := socks.connect()
	servers := make([]*dns.Server, 0, len(conns))
	for _, c := range conns {
		servers = append(servers, s.newUDP(c))
	}
	var done sync.WaitGroup
	if err := s.serve(servers, &done); err != nil {
		closeUDP(conns)
		return errors.Join(connectErr, fmt.Errorf("adopting UDP sockets: %w", err))
	}
	drained := drain(ctx, socks, DrainQuiet)
	stopCtx, cancel := context.WithTimeout(context.Background(), adoptShutdown)
	defer cancel()
	errs := []error{connectErr, drained}
	for _, d := range servers {
		errs = append(errs, d.ShutdownContext(stopCtx)) // closes its socket
	}
	done.Wait()
	return errors.Join(errs...)
}

func closeUDP(conns []*net.UDPConn) {
	for _, c := range conns {
		c.Close()
	}
}
