package dnsserver

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/internal/polltest"
)

// tcpClient is a raw DNS-over-TCP connection to addr.
type tcpClient struct {
	net.Conn
	r *bufio.Reader
}

func dialTCP(t *testing.T, addr string) *tcpClient {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return &tcpClient{Conn: c, r: bufio.NewReaderSize(c, 64<<10)}
}

// send writes the queries for name numbered from first to first+n-1 (their
// IDs), in one write.
func (c *tcpClient) send(t *testing.T, name string, first, n int) {
	t.Helper()
	if err := c.trySend(name, first, n); err != nil {
		t.Fatalf("writing %d queries: %v", n, err)
	}
}

// dialAnswered dials addr and returns the connection once it has
// answered one query.
func dialAnswered(t *testing.T, addr string) *tcpClient {
	t.Helper()
	c := dialTCP(t, addr)
	c.send(t, "big.test.", 1, 1)
	if _, err := c.receive(); err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *tcpClient) trySend(name string, first, n int) error {
	var stream []byte
	for id := first; id < first+n; id++ {
		m := query(name, dns.TypeA, 0)
		m.Id = uint16(id)
		wire, err := m.Pack()
		if err != nil {
			return err
		}
		stream = append(binary.BigEndian.AppendUint16(stream, uint16(len(wire))), wire...)
	}
	_, err := c.Write(stream)
	return err
}

// receive reads one answer; err is io.EOF or a reset when the server
// closed the connection.
func (c *tcpClient) receive() (*dns.Msg, error) {
	var size [2]byte
	if _, err := io.ReadFull(c.r, size[:]); err != nil {
		return nil, err
	}
	wire := make([]byte, binary.BigEndian.Uint16(size[:]))
	if _, err := io.ReadFull(c.r, wire); err != nil {
		return nil, err
	}
	m := new(dns.Msg)
	return m, m.Unpack(wire)
}

// served says whether a new connection to addr gets an answer, and if
// not, why.
func served(addr string) error {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	c := &tcpClient{Conn: conn, r: bufio.NewReader(conn)}
	if err := c.trySend("big.test.", 7, 1); err != nil {
		return err
	}
	_, err = c.receive()
	return err
}

// eventuallyServed polls, for at most 10 s, until a new connection to
// addr gets an answer.
func eventuallyServed(t *testing.T, addr, why string) {
	t.Helper()
	polltest.Within(t, 10*time.Second, "a connection served after "+why, func() error { return served(addr) })
}

// closedByServer says whether err is how a read sees the server's close.
func closedByServer(err error) bool {
	var op *net.OpError
	return errors.Is(err, io.EOF) || errors.As(err, &op) && !op.Timeout()
}

func TestAConnectionBeyondTheLimitIsResetAndItsSlotComesBack(t *testing.T) {
	refused := make(chan struct{}, 10)
	s := startServerWith(t, Config{Responder: records(1), TCPMaxConnections: 2, TCPRefused: func() { refused <- struct{}{} }})
	var held []*tcpClient
	for i := range 2 {
		c := dialTCP(t, s.Addr())
		c.send(t, "big.test.", i, 1)
		if _, err := c.receive(); err != nil {
			t.Fatalf("connection %d of 2: %v", i+1, err)
		}
		held = append(held, c)
	}
	t.Run("the third connection is reset without an answer", func(t *testing.T) {
		if err := served(s.Addr()); !closedByServer(err) {
			t.Fatalf("got %v; want the connection closed", err)
		}
		select {
		case <-refused:
		case <-time.After(5 * time.Second):
			t.Fatal("TCPRefused was not called")
		}
	})
	t.Run("once a connection closes, a new one is served", func(t *testing.T) {
		held[0].Close()
		eventuallyServed(t, s.Addr(), "one of the two closed")
	})
}

func TestAnIdleConnectionIsClosedAfterTheIdleTimeout(t *testing.T) {
	const idle = 300 * time.Millisecond
	s := startServerWith(t, Config{Responder: records(1), TCPIdleTimeout: idle})
	c := dialAnswered(t, s.Addr())
	answered := time.Now()
	_, err := c.receive()
	waited := time.Since(answered)
	if !closedByServer(err) {
		t.Fatalf("read after the answer: %v; want the server's close", err)
	}
	if waited < idle-50*time.Millisecond || waited > 10*idle {
		t.Fatalf("closed %v after the last answer; want about %v", waited, idle)
	}
}

func TestAThousandPipelinedQueriesOnOneConnectionAreAllAnswered(t *testing.T) {
	const n = 1000
	s := startServer(t, records(3))
	c := dialTCP(t, s.Addr())
	sent := make(chan error, 1)
	go func() { sent <- c.trySend("big.test.", 0, n) }() // the answers are read while queries are still written
	answered := make([]bool, n)                          // by ID: the answers may come in any order (RFC 7766)
	for i := range n {
		resp, err := c.receive()
		if err != nil {
			t.Fatalf("answer %d of %d: %v", i+1, n, err)
		}
		if int(resp.Id) >= n || answered[resp.Id] || len(resp.Answer) != 3 {
			t.Fatalf("answer %d: id %d with %d records, want a new id below %d with 3", i+1, resp.Id, len(resp.Answer), n)
		}
		answered[resp.Id] = true
	}
	if err := <-sent; err != nil {
		t.Fatalf("writing %d queries: %v", n, err)
	}
}

func TestAConnectionIsClosedAfterTCPMaxQueries(t *testing.T) {
	s := startServerWith(t, Config{Responder: records(1), TCPMaxQueries: 3})
	c := dialTCP(t, s.Addr())
	c.send(t, "big.test.", 0, 5)
	for i := range 3 {
		if _, err := c.receive(); err != nil {
			t.Fatalf("answer %d of 3: %v", i+1, err)
		}
	}
	if resp, err := c.receive(); !closedByServer(err) {
		t.Fatalf("a fourth answer: %v, %v; want the connection closed", resp, err)
	}
}

// TestAClientThatNeverReadsIsClosedAfterTheIdleTimeout fills the socket
// buffers with big answers the client does not read: the server's write
// gives up after the idle timeout and frees the connection's slot.
func TestAClientThatNeverReadsIsClosedAfterTheIdleTimeout(t *testing.T) {
	s := startServerWith(t, Config{Responder: records(3000), TCPMaxConnections: 1, TCPIdleTimeout: 300 * time.Millisecond})
	slow := dialTCP(t, s.Addr())
	slow.send(t, "big.test.", 0, 400) // 400 answers of 48 kB: more than loopback's buffers hold (10 MB)
	if err := served(s.Addr()); err == nil {
		t.Fatal("a second connection was served while the first held the only slot")
	}
	eventuallyServed(t, s.Addr(), "the client stopped reading")
}
