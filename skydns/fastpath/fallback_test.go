package fastpath

import (
	"errors"
	"net"
	"os"
	"slices"
	"testing"
	"time"
)

func newTestFallback(t *testing.T) *fallbackConn {
	t.Helper()
	conns, err := ListenUDP("127.0.0.1:0", 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeAll(conns) })
	return newFallbackConn(conns[0], &NewStats().dropped)
}

func TestFallbackReadFrom(t *testing.T) {
	from := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5353}
	t.Run("returns a passed query and its client", func(t *testing.T) {
		c := newTestFallback(t)
		pkt := []byte("query")
		c.pass(pkt, from, nil)
		pkt[0] = 'X' // the fast path reuses its buffers
		b := make([]byte, 100)
		n, addr, err := c.ReadFrom(b)
		if err != nil || string(b[:n]) != "query" || addr.String() != from.String() {
			t.Fatalf("got %q from %v, %v; want the query from %v", b[:n], addr, err, from)
		}
	})
	t.Run("a deadline in the past interrupts a waiting read", func(t *testing.T) {
		c := newTestFallback(t)
		errc := make(chan error, 1)
		go func() { _, _, err := c.ReadFrom(make([]byte, 10)); errc <- err }()
		c.SetReadDeadline(time.Now().Add(time.Hour)) // not enforced: the read keeps waiting
		c.SetDeadline(time.Unix(1, 0))
		if err := <-errc; !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("got %v, want a deadline error", err)
		}
		c.SetReadDeadline(time.Time{})
		c.pass([]byte("q"), from, nil)
		if _, _, err := c.ReadFrom(make([]byte, 10)); err != nil {
			t.Fatalf("after clearing the deadline: %v", err)
		}
	})
	t.Run("Close ends reads", func(t *testing.T) {
		c := newTestFallback(t)
		c.Close()
		c.Close()
		if _, _, err := c.ReadFrom(make([]byte, 10)); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("got %v, want net.ErrClosed", err)
		}
	})
	t.Run("queries beyond the queue are dropped and counted", func(t *testing.T) {
		c := newTestFallback(t)
		for i := range fallbackQueue + 3 {
			c.pass([]byte("q"), &net.UDPAddr{IP: net.IPv4(127, 0, 1, byte(i%8)), Port: 5353}, nil)
		}
		if n := c.dropped.Load(); n != 3 {
			t.Fatalf("dropped %d, want 3", n)
		}
	})
	t.Run("one client's queries beyond its share are dropped and counted", func(t *testing.T) {
		c := newTestFallback(t)
		for range perSourceQueue + 3 {
			c.pass([]byte("q"), from, nil)
		}
		if n := c.dropped.Load(); n != 3 {
			t.Fatalf("dropped %d, want 3", n)
		}
	})
}

// TestFallbackServesClientsInTurn floods the queue from one client, then
// queues one query each from two others: they are read second and third,
// not after the flood.
func TestFallbackServesClientsInTurn(t *testing.T) {
	c := newTestFallback(t)
	flooder := &net.UDPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 53000}
	for range perSourceQueue {
		c.pass([]byte("flood"), flooder, nil)
	}
	c.pass([]byte("a"), &net.UDPAddr{IP: net.IPv4(10, 0, 0, 2), Port: 40000}, nil)
	c.pass([]byte("b"), &net.UDPAddr{IP: net.ParseIP("::ffff:10.0.0.3"), Port: 40000}, nil)
	var got []string
	b := make([]byte, 16)
	for range 5 {
		n, _, err := c.ReadFrom(b)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(b[:n]))
	}
	if want := []string{"flood", "a", "b", "flood", "flood"}; !slices.Equal(got, want) {
		t.Fatalf("read %q, want %q", got, want)
	}
	if n := c.dropped.Load(); n != 0 {
		t.Fatalf("dropped %d, want 0", n)
	}
}

func TestFallbackWriteTo(t *testing.T) {
	c := newTestFallback(t)
	client, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	to := client.LocalAddr().(*net.UDPAddr)
	for _, addr := range []net.Addr{&Addr{UDPAddr: *to}, to} {
		if _, err := c.WriteTo([]byte("answer"), addr); err != nil {
			t.Fatalf("WriteTo %T: %v", addr, err)
		}
		client.SetReadDeadline(time.Now().Add(5 * time.Second))
		b := make([]byte, 100)
		n, src, err := client.ReadFrom(b)
		if err != nil || string(b[:n]) != "answer" || src.String() != c.LocalAddr().String() {
			t.Fatalf("got %q from %v, %v; want the answer from %v", b[:n], src, err, c.LocalAddr())
		}
	}
	if _, err := c.WriteTo([]byte("x"), &net.TCPAddr{}); err == nil {
		t.Fatal("WriteTo a TCP address succeeded")
	}
}
