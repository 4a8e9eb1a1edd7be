package dnsserver

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kubesky/kubesky/skydns/fastpath"
)

// TCP serving: one goroutine per connection reads whatever the client
// has sent, takes every complete length-prefixed message out of it,
// answers the plain ones from the fast path's cache (when there is one)
// into one batch written with a single write, and hands each other
// message to a goroutine of the ordinary path, which writes its answer
// when it has it. Pipelined queries thus never wait for one another, and
// answers may leave in another order than their queries came (RFC 7766,
// 6.2.1.1); each carries its query's ID.
const (
	// firstQueryTimeout is how long a new connection may take to send
	// its first query (miekg/dns's read timeout).
	firstQueryTimeout = 2 * time.Second
	// tcpMissesInFlight bounds the queries of one connection the
	// ordinary path answers at once; the connection is not read further
	// until one finishes.
	tcpMissesInFlight = 16
	// tcpReadSize is a connection's first read buffer; it grows to hold
	// a larger message (at most 64 KiB).
	tcpReadSize = 4096
)

// tcpServer accepts connections from a tcpListener and serves each.
type tcpServer struct {
	ln         net.Listener // a *tcpListener, or a TLS listener over one (tls.go)
	h          *handler
	fast       *fastpath.Server // nil: every query takes the ordinary path
	idle       time.Duration
	maxQueries int // 0 or less: no limit
	invalid    func(error)

	stopping atomic.Bool // set by shutdown before it ends the sessions' reads

	mu       sync.Mutex // guards sessions and closing
	sessions map[*tcpSession]struct{}
	closing  bool
	done     sync.WaitGroup // the accept loop and every session
}

func newTCPServer(h *handler, ln net.Listener, cfg Config, fast *fastpath.Server) *tcpServer {
	return &tcpServer{
		ln: &tcpListener{Listener: ln, max: int64(cfg.TCPMaxConnections), writeTimeout: cfg.TCPIdleTimeout, refused: cfg.TCPRefused},
		h:  h, fast: fast, idle: cfg.TCPIdleTimeout, maxQueries: cfg.TCPMaxQueries, invalid: cfg.Invalid,
		sessions: map[*tcpSession]struct{}{},
	}
}

// start accepts connections until shutdown.
func (s *tcpServer) start() {
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		for {
			c, err := s.ln.Accept()
			if err != nil {
				if !errors.Is(err, net.ErrClosed) {
					s.h.logger.Error("accepting TCP connections", "err", err)
				}
				return
			}
			s.open(c)
		}
	}()
}

// open starts serving c, unless the server is shutting down.
func (s *tcpServer) open(c net.Conn) {
	sess := newTCPSession(s, c)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		c.Close()
		return
	}
	s.sessions[sess] = struct{}{}
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		sess.run()
		s.mu.Lock()
		delete(s.sessions, sess)
		s.mu.Unlock()
	}()
}

// shutdown stops accepting, ends every connection's reading (each then
// finishes the queries it has read and closes), and waits for them until
// ctx ends; then it closes the connections left.
func (s *tcpServer) shutdown(ctx context.Context) error {
	s.stopping.Store(true)
	s.mu.Lock()
	s.closing = true
	s.ln.Close()
	for sess := range s.sessions {
		sess.conn.SetReadDeadline(time.Unix(1, 0))
	}
	s.mu.Unlock()
	finished := make(chan struct{})
	go func() { s.done.Wait(); close(finished) }()
	select {
	case <-finished:
		return nil
	case <-ctx.Done():
	}
	s.mu.Lock()
	for sess := range s.sessions {
		sess.conn.Close()
	}
	s.mu.Unlock()
	return ctx.Err()
}
