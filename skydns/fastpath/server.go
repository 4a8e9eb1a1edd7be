package fastpath

import (
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kubesky/kubesky/skydns/rrl"
)

// DefaultMaxEntries is the default Config.MaxEntries.
const DefaultMaxEntries = 50000

// Config says what a Server serves and how.
type Config struct {
	// Conns are the UDP sockets to read, one goroutine each (ListenUDP);
	// the Server closes them.
	Conns []*net.UDPConn
	// Source fills the caches.
	Source Source
	// Changes, if set, lets the caches keep the answers a new version did
	// not touch (see Changes).
	Changes *Changes
	// MaxUDPSize is the largest UDP answer, the size Source's answers
	// advertise.
	MaxUDPSize int
	// MaxEntries bounds the answers kept, one Store shared by the
	// sockets' caches (see CacheConfig; default DefaultMaxEntries).
	MaxEntries int
	// Stats counts the answers, one shard per socket (default: a Stats of
	// its own).
	Stats  *Stats
	Logger *slog.Logger
	// Panicked, if set, is told of every panic a query caused, with the
	// query's packet; the query is answered SERVFAIL and the reader goes on.
	Panicked func(pkt []byte, value any)
	// RRL, if set, limits the answers per client network (package rrl):
	// dropped ones are not sent, slipped ones go out truncated.
	RRL *rrl.Limiter
	// LogAnswer, if set, is told of every answer sent: the client (whose
	// Network is the transport: "udp", "tcp", or "tls" for DNS over TLS),
	// the response (valid only during the call) and the time since its
	// batch was read. It runs on the socket's reader goroutine. Unset, the
	// readers pay one nil check per batch.
	LogAnswer func(client net.Addr, resp []byte, took time.Duration)
}

// Server answers plain queries on its sockets and passes the rest to
// Fallback.
type Server struct {
	conns    []*net.UDPConn
	fallback *fallbackConn
	readers  []*reader
	done     sync.WaitGroup
	errs     chan error

	cfg      Config        // for the streams' caches
	store    *Store        // the answers every reader and stream shares
	tcpStats *Shard        // the streams' counts
	tcpTurns atomic.Uint32 // the streams' replies with a rotation
}

// Start starts one reader per socket.
func Start(cfg Config) (*Server, error) {
	if len(cfg.Conns) == 0 || cfg.Source == nil || cfg.MaxUDPSize < minMsgSize {
		return nil, errors.New("fastpath: want sockets, a Source and a MaxUDPSize of at least 512")
	}
	cfg.defaults()
	store := NewStore(cfg.Source, cfg.MaxEntries)
	s := &Server{conns: cfg.Conns, fallback: newFallbackConn(cfg.Conns[0], &cfg.Stats.dropped), errs: make(chan error, len(cfg.Conns)),
		cfg: cfg, store: store, tcpStats: cfg.Stats.NewShard(true)}
	for _, conn := range cfg.Conns {
		r, err := s.newReader(conn, cfg, store)
		if err != nil {
			return nil, err
		}
		s.readers = append(s.readers, r)
	}
	for _, r := range s.readers {
		s.done.Add(1)
		go func() {
			defer s.done.Done()
			if err := r.run(); err != nil {
				cfg.Logger.Error("fast path stopped reading", "addr", r.addr(), "err", err)
				s.errs <- err
			}
		}()
	}
	return s, nil
}

func (c *Config) defaults() {
	if c.MaxEntries <= 0 {
		c.MaxEntries = DefaultMaxEntries
	}
	if c.Stats == nil {
		c.Stats = NewStats()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Panicked == nil {
		c.Panicked = func([]byte, any) {}
	}
}

func (s *Server) newReader(conn *net.UDPConn, cfg Config, store *Store) (*reader, error) {
	pktinfo, err := wantPacketInfo(conn)
	if err != nil {
		return nil, err
	}
	shard := cfg.Stats.NewShard(true)
	cache := NewCache(CacheConfig{Source: cfg.Source, Changes: cfg.Changes, MaxUDPSize: cfg.MaxUDPSize,
		Store: store, Stats: shard})
	return newReader(conn, cache, shard, s.fallback, pktinfo, cfg)
}

// Fallback is where the queries the fast path does not answer go: serve
// it with an ordinary server, whose answers it sends through the port.
func (s *Server) Fallback() net.PacketConn { return s.fallback }

// Queued is how many queries passed on to the ordinary path it has not
// read yet (Close drops them).
func (s *Server) Queued() int { return s.fallback.queue.len() }

// Addr is the address the sockets are bound to.
func (s *Server) Addr() net.Addr { return s.conns[0].LocalAddr() }

// Err delivers the error of a reader that stopped on its own.
func (s *Server) Err() <-chan error { return s.errs }

// Close closes the sockets and the fallback connection, and returns once
// every reader has stopped (so the port is free).
func (s *Server) Close() error {
	s.fallback.Close()
	var errs []error
	for _, c := range s.conns {
		errs = append(errs, c.Close())
	}
	s.done.Wait()
	return errors.Join(errs...)
}
