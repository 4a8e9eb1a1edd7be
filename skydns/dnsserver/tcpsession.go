package dnsserver

import (
	"crypto/tls"
	"encoding/binary"
	"net"
	"sync"
	"time"

	"github.com/kubesky/kubesky/skydns/fastpath"
)

// tcpSession serves one TCP connection (see tcpServer).
type tcpSession struct {
	srv    *tcpServer
	conn   net.Conn
	stream *fastpath.Stream // nil without a fast path

	wmu      sync.Mutex // serializes writes to conn
	inflight sync.WaitGroup
	slots    chan struct{} // one per query the ordinary path is answering

	buf   []byte // read, not yet taken out: buf[:n]
	n     int
	batch []byte // the fast path's answers to what was read
	read  int    // queries read so far
}

func newTCPSession(srv *tcpServer, conn net.Conn) *tcpSession {
	s := &tcpSession{srv: srv, conn: conn, slots: make(chan struct{}, tcpMissesInFlight), buf: make([]byte, tcpReadSize)}
	if srv.fast != nil {
		s.stream = srv.fast.NewStream(streamClient(conn))
	}
	return s
}

// tlsAddr is a DNS over TLS client's address: its Network is "tls".
type tlsAddr struct{ *net.TCPAddr }

func (tlsAddr) Network() string { return "tls" }

// streamClient is the address the fast path tells of conn's answers
// with (fastpath.Config.LogAnswer): a tlsAddr over DNS over TLS, else
// conn's remote address.
func streamClient(conn net.Conn) net.Addr {
	a := conn.RemoteAddr()
	if tcp, ok := a.(*net.TCPAddr); ok {
		if _, ok := conn.(*tls.Conn); ok {
			return tlsAddr{tcp}
		}
	}
	return a
}

// run reads and answers until the client closes, goes idle, sends a
// message that cannot be read, reaches the query limit, or the server
// shuts down; then it waits for the ordinary path's answers and closes.
//
// The read deadline is set when the connection has taken out every
// message it read, or at least one since the deadline was set: a message
// must arrive whole within the timeout (2 s for the first, then
// --tcp-idle-timeout), however slowly its bytes come.
func (s *tcpSession) run() {
	defer s.conn.Close()
	defer s.inflight.Wait()
	progress := true
	for {
		if progress || s.n == 0 {
			timeout := s.srv.idle
			if s.read == 0 {
				timeout = firstQueryTimeout
			}
			s.conn.SetReadDeadline(time.Now().Add(timeout))
			if s.srv.stopping.Load() { // shutdown's deadline in the past may have come first
				return
			}
		}
		n, err := s.conn.Read(s.buf[s.n:])
		if n == 0 && err != nil {
			return
		}
		s.n += n
		before := s.read
		if !s.serveRead(time.Now()) {
			return
		}
		progress = s.read > before
	}
}

// serveRead answers every complete message read, and reports whether the
// connection may go on.
func (s *tcpSession) serveRead(start time.Time) bool {
	if s.stream != nil {
		s.stream.Refresh()
	}
	s.batch = s.batch[:0]
	off, more := 0, true
	for more && off+2 <= s.n {
		size := int(binary.BigEndian.Uint16(s.buf[off:]))
		if off+2+size > s.n {
			break
		}
		s.serveMsg(s.buf[off+2 : off+2+size])
		off += 2 + size
		s.read++
		more = s.srv.maxQueries <= 0 || s.read < s.srv.maxQueries
	}
	s.keepRest(off)
	if len(s.batch) > 0 {
		s.write(s.batch)
		s.stream.Sent(s.batch, time.Since(start))
	}
	return more
}

// serveMsg answers one message: from the fast path, or by passing it to
// a goroutine of the ordinary path.
func (s *tcpSession) serveMsg(msg []byte) {
	if s.stream != nil {
		var ok bool
		if s.batch, ok = s.stream.Answer(s.batch, msg); ok {
			return
		}
	}
	msg = append([]byte(nil), msg...) // buf is read into again
	s.slots <- struct{}{}
	s.inflight.Add(1)
	go func() {
		defer func() { <-s.slots; s.inflight.Done() }()
		s.srv.serveOrdinary(tcpWriter{s: s}, msg)
	}()
}

// keepRest moves the bytes of an incomplete message, from off, to the
// start of the buffer, which grows if the message does not fit.
func (s *tcpSession) keepRest(off int) {
	s.n = copy(s.buf, s.buf[off:s.n])
	if len(s.buf) > tcpReadSize && s.n < 2 { // a large message was answered
		s.buf = append(make([]byte, 0, tcpReadSize), s.buf[:s.n]...)[:tcpReadSize]
	}
	if s.n >= 2 {
		if need := 2 + int(binary.BigEndian.Uint16(s.buf)); need > len(s.buf) {
			grown := make([]byte, need)
			copy(grown, s.buf[:s.n])
			s.buf = grown
		}
	}
}

// write writes b, framed answers, in one write. A write that fails
// closes the connection (tcpConn), so the next read ends the session.
func (s *tcpSession) write(b []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err := s.conn.Write(b)
	return err
}
