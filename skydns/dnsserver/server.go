package dnsserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/skydns/fastpath"
	"github.com/kubesky/kubesky/skydns/rrl"
)

// Defaults of Config.
const (
	DefaultMaxUDPSize   = 4096
	DefaultQueryTimeout = 5 * time.Second
)

// Config says where a Server listens and who answers.
type Config struct {
	// Addr is the host:port for both UDP and TCP. With port 0 one free
	// port is chosen for both.
	Addr      string
	Responder Responder
	// MaxUDPSize caps the EDNS0 buffer size honoured over UDP, and is the
	// size advertised in responses (default DefaultMaxUDPSize).
	MaxUDPSize int
	// QueryTimeout bounds the context given to the Responder (default
	// DefaultQueryTimeout).
	QueryTimeout time.Duration
	// Observe, if set, is called after every response is written.
	Observe func(Exchange)
	// Invalid, if set, is called for every packet that did not parse: those
	// with a readable header got FORMERR, the others no answer.
	Invalid func(err error)
	// Panicked, if set, is told of every panic a query caused: the path
	// ("udp", "tcp", or "fast" for the fast path), the query in wire
	// format (nil if it does not pack) and the value. The query is
	// answered SERVFAIL and the server goes on.
	Panicked func(path string, packet []byte, value any)
	Logger   *slog.Logger

	// UDPSockets is how many UDP sockets share Addr's port (SO_REUSEPORT),
	// each read by its own goroutine (default 1).
	UDPSockets int
	// ReusePort sets SO_REUSEPORT on every socket, the TCP listener too,
	// even with one UDP socket: other processes of the same user may then
	// share Addr (node-local mode; see StepAside).
	ReusePort bool
	// FastPath, if set, answers plain UDP and TCP queries from packed
	// answers before they are parsed (package fastpath); the others reach
	// the Responder as before. Observe does not see the fast path's answers:
	// FastStats counts them.
	FastPath fastpath.Source
	// FastPathEntries bounds each UDP socket's cache of packed answers
	// (default fastpath.DefaultMaxEntries).
	FastPathEntries int
	// FastPathChanges, if set, tells the fast path's caches what each new
	// version changed, so they keep the rest.
	FastPathChanges *fastpath.Changes
	// FastStats, if set, counts the fast path's answers and latency.
	FastStats *fastpath.Stats
	// FastLog, if set, is told of every answer of the fast path (see
	// fastpath.Config.LogAnswer); Observe sees the others.
	FastLog func(client net.Addr, resp []byte, took time.Duration)

	// TCPMaxConnections bounds the TCP connections open at once; one
	// beyond it is reset when accepted (0: DefaultTCPMaxConnections,
	// negative: no limit).
	TCPMaxConnections int
	// TCPIdleTimeout is how long a TCP connection may wait for its next
	// query before it is closed, and how long writing an answer may wait
	// for a client that does not read (default DefaultTCPIdleTimeout).
	// The first query must come within 2 s (miekg/dns's read timeout).
	TCPIdleTimeout time.Duration
	// TCPMaxQueries bounds the queries read from one TCP connection
	// before it is closed (0 or less: no limit).
	TCPMaxQueries int
	// TCPRefused, if set, is called for every connection reset because
	// TCPMaxConnections were open.
	TCPRefused func()
	// UDPMaxInFlight bounds the UDP queries the ordinary path reads and
	// has not finished with (default DefaultUDPMaxInFlight); the rest wait
	// in the sockets or the fast path's queue.
	UDPMaxInFlight int

	// RRL, if set, limits the UDP answers per client network, on the fast
	// path too (package rrl). TCP answers are never limited.
	RRL *rrl.Limiter

	// Transfer, if set, answers the zone transfer requests (AXFR, IXFR)
	// that come over TCP, in place of the Responder: it writes the
	// transfer to w itself and returns nil, or returns the one message to
	// answer with (a refusal). Over UDP they reach the Responder.
	Transfer func(q Query, w dns.ResponseWriter) *dns.Msg

	// TLSAddr, if set with TLS, is a host:port where DNS over TLS is
	// served like TCP (tls.go).
	TLSAddr string
	TLS     *tls.Config

	// RecursionAvailable, if set, says whether a client may have names
	// outside the zones resolved: the RA bit of the error answers the
	// server writes itself (FORMERR, NOTIMP). Unset: never.
	RecursionAvailable func(client netip.Addr) bool
}

// Server serves DNS over UDP and TCP on one port.
type Server struct {
	udp   []*dns.Server  // one per socket, or one reading the fast path's fallback
	conns []*net.UDPConn // the UDP sockets, for StepAside
	// portNamed is set when Config.Addr named the port (not 0), which
	// StepAside needs.
	portNamed bool
	// newUDP makes an ordinary UDP server reading conn (Adopt's too).
	newUDP func(conn net.PacketConn) *dns.Server
	tcp    *tcpServer
	tls    *tcpServer       // nil without DNS over TLS
	fast   *fastpath.Server // nil without a fast path
	addr   string
	cancel context.CancelFunc
	done   sync.WaitGroup
	logger *slog.Logger
}

// Start binds cfg.Addr on UDP and TCP and returns once both serve.
func Start(cfg Config) (*Server, error) {
	if cfg.Responder == nil {
		return nil, errors.New("dnsserver: no Responder")
	}
	cfg.defaults()
	conns, ln, err := listen(cfg.Addr, cfg.UDPSockets, cfg.ReusePort)
	if err != nil {
		return nil, err
	}
	base, cancel := context.WithCancel(context.Background())
	h := &handler{responder: cfg.Responder, maxUDPSize: cfg.MaxUDPSize, queryTimeout: cfg.QueryTimeout,
		base: base, observe: cfg.Observe, panicked: cfg.Panicked, logger: cfg.Logger, rrl: cfg.RRL, udpSlots: make(udpSlots, cfg.UDPMaxInFlight),
		transfer: cfg.Transfer, recursion: recursionFor(cfg.RecursionAvailable)}
	_, port, _ := net.SplitHostPort(cfg.Addr)
	s := &Server{addr: ln.Addr().String(), conns: conns, portNamed: port != "0", cancel: cancel, logger: cfg.Logger}
	s.newUDP = func(conn net.PacketConn) *dns.Server {
		return newDNSServer(h, cfg, func(d *dns.Server) { d.PacketConn = conn; h.udpSlots.limit(d) })
	}
	err = s.serveUDP(cfg, conns)
	if err == nil {
		err = s.serve(s.udp, &s.done)
	}
	if err != nil {
		cancel()
		s.closeSockets(conns, ln)
		return nil, err
	}
	if cfg.TLSAddr != "" && cfg.TLS != nil {
		if s.tls, err = startTLS(h, cfg, s.fast); err != nil {
			cancel()
			s.closeSockets(conns, ln)
			return nil, err
		}
	}
	s.tcp = newTCPServer(h, ln, cfg, s.fast)
	s.tcp.start()
	return s, nil
}

// serveUDP prepares the UDP servers: one ordinary server per socket, or
// the fast path on every socket and one ordinary server for the queries
// it passes on.
func (s *Server) serveUDP(cfg Config, conns []*net.UDPConn) error {
	if cfg.FastPath == nil {
		for _, c := range conns {
			s.udp = append(s.udp, s.newUDP(c))
		}
		return nil
	}
	fast, err := fastpath.Start(fastpath.Config{Conns: conns, Source: cfg.FastPath, Changes: cfg.FastPathChanges, MaxUDPSize: cfg.MaxUDPSize,
		MaxEntries: cfg.FastPathEntries, Stats: cfg.FastStats, Logger: cfg.Logger, LogAnswer: cfg.FastLog, RRL: cfg.RRL,
		Panicked: func(pkt []byte, v any) { cfg.Panicked("fast", pkt, v) }})
	if err != nil {
		return err
	}
	s.fast = fast
	s.udp = []*dns.Server{s.newUDP(fast.Fallback())}
	return nil
}

// closeSockets closes what a failed Start opened.
func (s *Server) closeSockets(conns []*net.UDPConn, ln net.Listener) {
	ln.Close()
	if s.fast != nil {
		s.fast.Close()
		return
	}
	closeUDP(conns)
}

func (c *Config) defaults() {
	if c.MaxUDPSize < dns.MinMsgSize {
		c.MaxUDPSize = DefaultMaxUDPSize
	}
	if c.QueryTimeout <= 0 {
		c.QueryTimeout = DefaultQueryTimeout
	}
	if c.Observe == nil {
		c.Observe = func(Exchange) {}
	}
	if c.Invalid == nil {
		c.Invalid = func(error) {}
	}
	if c.Panicked == nil {
		c.Panicked = func(string, []byte, any) {}
	}
	if c.TCPMaxConnections == 0 {
		c.TCPMaxConnections = DefaultTCPMaxConnections
	}
	if c.TCPIdleTimeout <= 0 {
		c.TCPIdleTimeout = DefaultTCPIdleTimeout
	}
	if c.UDPMaxInFlight <= 0 {
		c.UDPMaxInFlight = DefaultUDPMaxInFlight
	}
	if c.TCPRefused == nil {
		c.TCPRefused = func() {}
	}
	if c.UDPSockets < 1 {
		c.UDPSockets = 1
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

func newDNSServer(h *handler, cfg Config, bind func(*dns.Server)) *dns.Server {
	invalid := cfg.Invalid
	d := &dns.Server{
		Handler:        h,
		UDPSize:        dns.DefaultMsgSize,
		MsgAcceptFunc:  accept,
		MsgInvalidFunc: func(_ []byte, err error) { invalid(err) },
	}
	h.decorateFlags(d)
	bind(d)
	return d
}

// serve starts servers, counted in done until they return, and waits
// until all have started or one failed.
func (s *Server) serve(servers []*dns.Server, done *sync.WaitGroup) error {
	started := make(chan struct{}, len(servers))
	failed := make(chan error, len(servers))
	for _, d := range servers {
		d.NotifyStartedFunc = func() { started <- struct{}{} }
		done.Add(1)
		go func() {
			defer done.Done()
			if err := d.ActivateAndServe(); err != nil {
				failed <- err
			}
		}()
	}
	for range servers {
		select {
		case <-started:
		case err := <-failed:
			return fmt.Errorf("serving DNS on %s: %w", s.addr, err)
		}
	}
	return nil
}

// Addr is the host:port both transports listen on.
func (s *Server) Addr() string { return s.addr }

// Shutdown stops accepting queries, lets those in progress finish until ctx
// ends, and closes the sockets.
func (s *Server) Shutdown(ctx context.Context) error {
	defer s.cancel()
	errs := []error{s.tcp.shutdown(ctx)}
	if s.tls != nil {
		errs = append(errs, s.tls.shutdown(ctx))
	}
	for _, d := range s.udp {
		errs = append(errs, d.ShutdownContext(ctx))
	}
	finished := make(chan struct{})
	go func() { s.done.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-ctx.Done():
		errs = append(errs, fmt.Errorf("DNS server on %s: %w", s.addr, ctx.Err()))
	}
	if s.fast != nil {
		errs = append(errs, s.fast.Close())
	}
	return errors.Join(errs...)
}

// listen binds addr on UDP (udpSockets sockets sharing the port), then the
// same port on TCP, with SO_REUSEPORT on all when shared. When addr asks
// for any free port and the UDP one is taken on TCP, it tries another.
func listen(addr string, udpSockets int, shared bool) ([]*net.UDPConn, net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, nil, fmt.Errorf("DNS address %q: %w", addr, err)
	}
	for attempt := 1; ; attempt++ {
		conns, err := listenUDP(addr, udpSockets, shared)
		if err != nil {
			return nil, nil, err
		}
		_, bound, _ := net.SplitHostPort(conns[0].LocalAddr().String())
		ln, err := listenTCP(net.JoinHostPort(host, bound), shared)
		if err == nil {
			return conns, ln, nil
		}
		for _, c := range conns {
			c.Close()
		}
		if port != "0" || attempt == 10 {
			return nil, nil, fmt.Errorf("listening on tcp %s: %w", net.JoinHostPort(host, bound), err)
		}
	}
}

func listenUDP(addr string, n int, shared bool) ([]*net.UDPConn, error) {
	if shared {
		return fastpath.ListenUDPShared(addr, n)
	}
	return fastpath.ListenUDP(addr, n)
}

func listenTCP(addr string, shared bool) (net.Listener, error) {
	lc := net.ListenConfig{}
	if shared {
		lc.Control = fastpath.ReusePort
	}
	return lc.Listen(context.Background(), "tcp", addr)
}
