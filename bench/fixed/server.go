package fixed

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/miekg/dns"
)

// Server serves a Handler on UDP and TCP at one address.
type Server struct {
	udp, tcp *dns.Server
	addr     string
	errs     chan error
}

// Start binds addr (host:port, port 0 picks one) on UDP and then TCP on the
// same port, and returns once both serve.
func Start(addr string, h dns.Handler) (*Server, error) {
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening on UDP %s: %w", addr, err)
	}
	ln, err := net.Listen("tcp", pc.LocalAddr().String())
	if err != nil {
		pc.Close()
		return nil, fmt.Errorf("listening on TCP %s: %w", pc.LocalAddr(), err)
	}
	s := &Server{
		udp:  &dns.Server{PacketConn: pc, Handler: h},
		tcp:  &dns.Server{Listener: ln, Handler: h},
		addr: pc.LocalAddr().String(),
		errs: make(chan error, 2),
	}
	if err := s.serve(); err != nil {
		s.Shutdown(context.Background())
		return nil, err
	}
	return s, nil
}

// serve starts both servers and waits until each has started or failed.
func (s *Server) serve() error {
	started := make(chan struct{}, 2)
	for _, d := range []*dns.Server{s.udp, s.tcp} {
		d.NotifyStartedFunc = func() { started <- struct{}{} }
		go func() { s.errs <- d.ActivateAndServe() }()
	}
	for range 2 {
		select {
		case <-started:
		case err := <-s.errs:
			return fmt.Errorf("serving DNS on %s: %w", s.addr, err)
		}
	}
	return nil
}

// Addr is the host:port both transports serve on.
func (s *Server) Addr() string { return s.addr }

// Err delivers an error if a transport stops serving on its own.
func (s *Server) Err() <-chan error { return s.errs }

// Shutdown stops both transports.
func (s *Server) Shutdown(ctx context.Context) error {
	return errors.Join(s.udp.ShutdownContext(ctx), s.tcp.ShutdownContext(ctx))
}
