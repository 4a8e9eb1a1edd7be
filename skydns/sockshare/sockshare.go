// Package sockshare keeps a node-local skydns's UDP sockets, and the
// queries queued in them, alive past a kill -9 of the process.
//
// Linux drops a socket's receive queue when its last descriptor closes,
// and a process killed with SIGKILL keeps its sockets in the port's
// SO_REUSEPORT group until its memory is torn down: the queries that reach
// it meanwhile, and those it held, are lost, and each costs a client its
// resolver's 5 s timeout. So every skydns sharing a port hands copies of
// its UDP socket descriptors (SCM_RIGHTS) to the others, through Unix
// sockets in a directory they share, and keeps the connection open. When
// a peer's connection ends (the peer exited, by kill -9 or otherwise), the
// survivor holds the peer's sockets with their queues and passes them to
// Adopt, which answers what they hold and closes them.
//
// A holder (Config.Holder, skydns/sockhold) shares no socket of its own: it
// only keeps copies of its peers' sockets, so that a node with one skydns
// loses nothing to a kill -9 either.
package sockshare

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// hello starts every message: the protocol and its version.
const hello = "skydns-sockets/1"

// maxSockets bounds the descriptors one message may carry.
const maxSockets = 64

// dialTimeout bounds connecting to a peer and the exchange with it.
const dialTimeout = 2 * time.Second

// Config is what a Sharer shares and what it does with a gone peer's
// sockets.
type Config struct {
	// Dir is the directory the skydns sharing a port share, where each
	// listens on a Unix socket of its own.
	Dir string
	// Conns are this process's UDP sockets, handed to every peer.
	Conns []*net.UDPConn
	// Adopt is given a gone peer's UDP sockets, still holding what was
	// queued in them; it answers those queries and closes the sockets.
	// ctx ends when the Sharer closes.
	Adopt func(ctx context.Context, conns []*net.UDPConn)
	// Holder shares no sockets (Conns is empty): it holds its peers'.
	Holder bool
	// Attached, if set, is called when a peer's sockets have arrived.
	Attached func()
	Logger   *slog.Logger
}

// Sharer exchanges UDP sockets with the peers in Config.Dir.
type Sharer struct {
	cfg    Config
	path   string // this process's Unix socket
	ln     *net.UnixListener
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu    sync.Mutex
	peers map[*net.UnixConn]bool // open connections to peers
}

// Start listens in cfg.Dir, exchanges sockets with every peer already
// there, and then with every peer that connects later.
func Start(cfg Config) (*Sharer, error) {
	if cfg.Holder != (len(cfg.Conns) == 0) || len(cfg.Conns) > maxSockets {
		return nil, fmt.Errorf("sharing sockets: %d UDP sockets, want 1 to %d (none for a holder)", len(cfg.Conns), maxSockets)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	path, ln, err := listen(cfg.Dir)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Sharer{cfg: cfg, path: path, ln: ln, ctx: ctx, cancel: cancel, peers: map[*net.UnixConn]bool{}}
	s.dialPeers()
	s.wg.Go(s.accept)
	return s, nil
}

// listen makes this process's Unix socket in dir, under a random name:
// the containers of a pod may all be PID 1.
func listen(dir string) (string, *net.UnixListener, error) {
	f, err := os.CreateTemp(dir, "skydns-*.sock")
	if err != nil {
		return "", nil, fmt.Errorf("sharing sockets in %s: %w", dir, err)
	}
	path := f.Name()
	f.Close()
	os.Remove(path)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return "", nil, fmt.Errorf("sharing sockets in %s: %w", dir, err)
	}
	ln.SetUnlinkOnClose(true)
	return path, ln, nil
}

// dialPeers connects to every other socket in the directory; one nobody
// listens on is a dead process's, and is removed.
func (s *Sharer) dialPeers() {
	paths, _ := filepath.Glob(filepath.Join(s.cfg.Dir, "skydns-*.sock"))
	for _, path := range paths {
		if path == s.path {
			continue
		}
		d := net.Dialer{Timeout: dialTimeout}
		c, err := d.Dial("unix", path)
		if err != nil {
			if isRefused(err) {
				os.Remove(path)
			}
			s.cfg.Logger.Debug("sharing sockets: no peer", "socket", path, "err", err)
			continue
		}
		s.start(c.(*net.UnixConn))
	}
}

// accept exchanges sockets with every peer that connects, until Close.
func (s *Sharer) accept() {
	for {
		c, err := s.ln.AcceptUnix()
		if err != nil {
			if s.ctx.Err() == nil {
				s.cfg.Logger.Error("sharing sockets: accepting a peer failed, sharing stops", "err", err)
			}
			return
		}
		s.start(c)
	}
}

// start runs the exchange with the peer on c in the background.
func (s *Sharer) start(c *net.UnixConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx.Err() != nil {
		c.Close()
		return
	}
	s.peers[c] = true
	s.wg.Go(func() { s.exchange(c) })
}

// exchange sends this process's sockets to the peer on c, receives the
// peer's, and holds them until the connection ends: then the peer is gone
// and its sockets are adopted, unless this Sharer is closing.
func (s *Sharer) exchange(c *net.UnixConn) {
	defer s.forget(c)
	c.SetDeadline(time.Now().Add(dialTimeout))
	if err := send(c, s.cfg.Conns); err != nil {
		s.cfg.Logger.Warn("sharing sockets: sending ours to a peer failed", "err", err)
		return
	}
	theirs, err := receive(c)
	if err != nil {
		s.cfg.Logger.Warn("sharing sockets: a peer's message refused", "err", err)
		return
	}
	c.SetDeadline(time.Time{})
	s.cfg.Logger.Info("sharing sockets with a peer", "theirs", len(theirs), "ours", len(s.cfg.Conns))
	if len(theirs) > 0 && s.cfg.Attached != nil {
		s.cfg.Attached()
	}
	waitForEOF(c)
	if len(theirs) == 0 {
		return // a holder's: nothing to adopt
	}
	if s.ctx.Err() != nil {
		closeAll(theirs)
		return
	}
	s.cfg.Logger.Info("a peer is gone: answering what its sockets hold", "sockets", len(theirs))
	s.cfg.Adopt(s.ctx, theirs)
}

// waitForEOF reads c until it ends; a peer never writes after its message.
func waitForEOF(c *net.UnixConn) {
	var b [64]byte
	for {
		if _, err := c.Read(b[:]); err != nil {
			return
		}
	}
}

func (s *Sharer) forget(c *net.UnixConn) {
	c.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.peers, c)
}

// Close stops sharing: the peers see the connections end and adopt this
// process's sockets. The peers' sockets held here are closed, not
// adopted; Close waits for an adoption in progress to end.
func (s *Sharer) Close() error {
	s.mu.Lock()
	s.cancel()
	for c := range s.peers {
		c.Close()
	}
	s.mu.Unlock()
	err := s.ln.Close()
	s.wg.Wait()
	return err
}

func closeAll(conns []*net.UDPConn) {
	for _, c := range conns {
		c.Close()
	}
}

// isRefused reports a Unix socket nobody listens on.
func isRefused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED)
}
