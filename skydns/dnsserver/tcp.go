package dnsserver

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of Config's TCP limits.
const (
	// DefaultTCPMaxConnections bounds the TCP connections open at once.
	DefaultTCPMaxConnections = 1000
	// DefaultTCPIdleTimeout is how long a connection may wait for its next
	// query, and how long a write may wait for a client that does not
	// read (miekg/dns's own idle timeout).
	DefaultTCPIdleTimeout = 8 * time.Second
)

// tcpListener accepts at most max connections at a time (no limit when max
// is 0 or less): a connection beyond the limit is reset at once, so that
// it neither holds memory nor waits in the kernel's backlog. Each
// connection it returns gives up on a write after writeTimeout and is then
// closed: a client that never reads its answers cannot hold a goroutine.
type tcpListener struct {
	net.Listener
	max          int64
	writeTimeout time.Duration
	open         atomic.Int64
	refused      func()
}

func (l *tcpListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if n := l.open.Add(1); l.max > 0 && n > l.max {
			l.open.Add(-1)
			reset(c)
			l.refused()
			continue
		}
		return &tcpConn{Conn: c, listener: l}, nil
	}
}

// reset closes c with a TCP reset rather than an orderly close: no
// TIME_WAIT state is kept for a connection that was never served.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}

// tcpConn is one accepted connection, counted until it is closed.
type tcpConn struct {
	net.Conn
	listener *tcpListener
	release  sync.Once
}

// Write writes b within the listener's write timeout; a write that fails
// closes the connection, so the server's next read ends it.
func (c *tcpConn) Write(b []byte) (int, error) {
	c.SetWriteDeadline(time.Now().Add(c.listener.writeTimeout))
	n, err := c.Conn.Write(b)
	if err != nil {
		c.Close()
	}
	return n, err
}

func (c *tcpConn) Close() error {
	c.release.Do(func() { c.listener.open.Add(-1) })
	return c.Conn.Close()
}
