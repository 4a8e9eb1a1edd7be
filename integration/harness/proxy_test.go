package harness

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"
)

// echoServer answers each line with the same line until the test ends.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					fmt.Fprintln(c, sc.Text())
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// roundTrip sends one line through a connection and reads the echo.
func roundTrip(c net.Conn, line string) error {
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := fmt.Fprintln(c, line); err != nil {
		return err
	}
	got, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if got != line+"\n" {
		return fmt.Errorf("echo %q, want %q", got, line)
	}
	return nil
}

func dialAndRoundTrip(addr string) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	return roundTrip(c, "ping")
}

func TestProxyForwardsBlocksAndHeals(t *testing.T) {
	p := StartProxy(t, echoServer(t))
	c, err := net.Dial("tcp", p.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := roundTrip(c, "hello"); err != nil {
		t.Fatalf("through the proxy: %v", err)
	}

	p.Block()
	t.Run("a blocked proxy cuts live connections", func(t *testing.T) {
		if err := roundTrip(c, "again"); err == nil {
			t.Fatal("round trip on a cut connection succeeded")
		}
	})
	t.Run("a blocked proxy refuses new connections", func(t *testing.T) {
		if err := dialAndRoundTrip(p.Addr); err == nil {
			t.Fatal("round trip through a blocked proxy succeeded")
		}
	})

	p.Unblock()
	t.Run("an unblocked proxy forwards again", func(t *testing.T) {
		if err := dialAndRoundTrip(p.Addr); err != nil {
			t.Fatal(err)
		}
	})
}

func TestProxyToAnAbsentTargetClosesConnections(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	target := ln.Addr().String()
	ln.Close()
	p := StartProxy(t, target)
	if err := dialAndRoundTrip(p.Addr); err == nil || errors.Is(err, net.ErrClosed) {
		t.Fatalf("round trip to a closed target: %v, want an I/O error", err)
	}
}

// dialFrom connects to addr and sends an HTTP request head naming source
// in X-Server-From, as an etcd member's peer transport does.
func dialFrom(t *testing.T, addr, source string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := fmt.Fprintf(c, "GET /raft/stream HTTP/1.1\r\nX-Server-From: %s\r\n\r\n", source); err != nil {
		t.Fatal(err)
	}
	// The echo server answers the head's lines; skip them.
	r := bufio.NewReader(c)
	c.SetDeadline(time.Now().Add(2 * time.Second))
	for range 3 {
		if _, err := r.ReadString('\n'); err != nil {
			return c // cut: roundTrip reports it
		}
	}
	return c
}

func TestPeerProxyCutsOneSource(t *testing.T) {
	p := StartPeerProxy(t, echoServer(t))
	a, b := dialFrom(t, p.Addr, "a1"), dialFrom(t, p.Addr, "b2")
	if err := roundTrip(a, "from a"); err != nil {
		t.Fatalf("through the proxy: %v", err)
	}

	p.Cut("a1")
	t.Run("the cut source's connections are closed", func(t *testing.T) {
		if err := roundTrip(a, "again"); err == nil {
			t.Fatal("round trip on a cut source's connection succeeded")
		}
	})
	t.Run("the cut source's new connections are refused", func(t *testing.T) {
		if err := roundTrip(dialFrom(t, p.Addr, "a1"), "new"); err == nil {
			t.Fatal("round trip from a cut source succeeded")
		}
	})
	t.Run("other sources go on", func(t *testing.T) {
		if err := roundTrip(b, "from b"); err != nil {
			t.Fatal(err)
		}
		if err := roundTrip(dialFrom(t, p.Addr, "c3"), "from c"); err != nil {
			t.Fatal(err)
		}
	})

	p.Mend("a1")
	t.Run("a mended source connects again", func(t *testing.T) {
		if err := roundTrip(dialFrom(t, p.Addr, "a1"), "back"); err != nil {
			t.Fatal(err)
		}
	})
}
