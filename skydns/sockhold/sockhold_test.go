package sockhold

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
	"golang.org/x/sys/unix"

	"github.com/kubesky/kubesky/internal/polltest"
	"github.com/kubesky/kubesky/skydns/sockshare"
)

// upstreamAnswer is what the test's upstream answers every A query with.
const upstreamAnswer = "192.0.2.53"

// startUpstream runs a DNS server on 127.0.0.1 that answers every query
// with one A record, upstreamAnswer: the kube-dns Service's stand-in.
func startUpstream(t *testing.T) netip.AddrPort {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(q)
		rr, _ := dns.NewRR(q.Question[0].Name + " 5 IN A " + upstreamAnswer)
		m.Answer = append(m.Answer, rr)
		w.WriteMsg(m)
	})}
	go srv.ActivateAndServe()
	t.Cleanup(func() { srv.Shutdown() })
	return pc.LocalAddr().(*net.UDPAddr).AddrPort()
}

// reusePort binds a UDP socket with SO_REUSEPORT on addr ("127.0.0.1:0"
// picks a port), as a node-local skydns does.
func reusePort(t *testing.T, addr string) *net.UDPConn {
	t.Helper()
	lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1) })
		if err != nil {
			return err
		}
		return serr
	}}
	pc, err := lc.ListenPacket(context.Background(), "udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	return pc.(*net.UDPConn)
}

// skydns stands for a node-local skydns: a socket on the port, answering
// every query itself with answer, and sharing it through dir.
type skydns struct {
	conn   *net.UDPConn
	sharer *sockshare.Sharer
}

func startSkydns(t *testing.T, dir, addr, answer string) *skydns {
	t.Helper()
	conn := reusePort(t, addr)
	go func() {
		buf := make([]byte, 512)
		for {
			n, client, err := conn.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			q := new(dns.Msg)
			if q.Unpack(buf[:n]) != nil {
				continue
			}
			m := new(dns.Msg)
			m.SetReply(q)
			rr, _ := dns.NewRR(q.Question[0].Name + " 5 IN A " + answer)
			m.Answer = append(m.Answer, rr)
			out, _ := m.Pack()
			conn.WriteToUDPAddrPort(out, client)
		}
	}()
	s, err := sockshare.Start(sockshare.Config{Dir: dir, Conns: []*net.UDPConn{conn}, Adopt: func(context.Context, []*net.UDPConn) {}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &skydns{conn: conn, sharer: s}
}

// die ends the skydns as a kill -9 does: its sharing connection and its
// own descriptor close at once; copies elsewhere stay open.
func (s *skydns) die() {
	s.sharer.Close()
	s.conn.Close()
}

func startHolder(t *testing.T, dir string, upstream netip.AddrPort) *Holder {
	t.Helper()
	h, err := Start(Config{Dir: dir, Upstream: upstream})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// answer asks addr for name and returns the A record's address.
func answer(addr, name string) (string, error) {
	q := new(dns.Msg)
	q.SetQuestion(name, dns.TypeA)
	c := dns.Client{Timeout: 500 * time.Millisecond}
	r, _, err := c.Exchange(q, addr)
	if err != nil {
		return "", err
	}
	if len(r.Answer) != 1 {
		return "", fmt.Errorf("%d answers", len(r.Answer))
	}
	return r.Answer[0].(*dns.A).A.String(), nil
}

// mustAnswer asks n names at addr and fails unless each gets want.
func mustAnswer(t *testing.T, addr string, n int, want string) {
	t.Helper()
	for i := range n {
		got, err := answer(addr, fmt.Sprintf("q%d.cluster.local.", i))
		if err != nil || got != want {
			t.Fatalf("query %d at %s: %q, %v; want %s", i, addr, got, err, want)
		}
	}
}

// waitHeld waits until h holds copies of n skydns's sockets.
func waitHeld(t *testing.T, h *Holder, n int) {
	t.Helper()
	polltest.Within(t, 10*time.Second, fmt.Sprintf("%d skydns attached", n), func() error {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.attached != n {
			return fmt.Errorf("%d attached", h.attached)
		}
		return nil
	})
}

func TestAGoneSkydnsSocketsAreAnsweredUpstreamUntilAnotherAttaches(t *testing.T) {
	dir, upstream := t.TempDir(), startUpstream(t)
	first := startSkydns(t, dir, "127.0.0.1:0", "10.0.0.1")
	addr := first.conn.LocalAddr().String()
	h := startHolder(t, dir, upstream)
	waitHeld(t, h, 1)
	mustAnswer(t, addr, 20, "10.0.0.1")

	first.die()
	mustAnswer(t, addr, 50, upstreamAnswer)
	if h.Forwarded() < 50 {
		t.Fatalf("%d queries forwarded, want at least 50", h.Forwarded())
	}

	startSkydns(t, dir, addr, "10.0.0.2")
	// The held sockets are released: from then on the new skydns alone answers.
	polltest.Within(t, 10*time.Second, "the new skydns alone answering", func() error {
		forwarded := h.Forwarded()
		for i := range 20 {
			if got, err := answer(addr, fmt.Sprintf("r%d.cluster.local.", i)); err != nil || got != "10.0.0.2" {
				return fmt.Errorf("%q, %v", got, err)
			}
		}
		if h.Forwarded() != forwarded {
			return fmt.Errorf("still forwarding")
		}
		return nil
	})
}

func TestAHolderRestartLosesNothing(t *testing.T) {
	dir, upstream := t.TempDir(), startUpstream(t)
	s := startSkydns(t, dir, "127.0.0.1:0", "10.0.0.1")
	addr := s.conn.LocalAddr().String()
	old := startHolder(t, dir, upstream)
	waitHeld(t, old, 1)
	old.Close() // the skydns keeps its own descriptor: nothing changes for clients
	mustAnswer(t, addr, 20, "10.0.0.1")

	restarted := startHolder(t, dir, upstream)
	waitHeld(t, restarted, 1)
	s.die()
	mustAnswer(t, addr, 20, upstreamAnswer)
}

func TestAClosingHolderReleasesWhatItHolds(t *testing.T) {
	dir, upstream := t.TempDir(), startUpstream(t)
	s := startSkydns(t, dir, "127.0.0.1:0", "10.0.0.1")
	addr := s.conn.LocalAddr().String()
	h := startHolder(t, dir, upstream)
	waitHeld(t, h, 1)
	s.die()
	mustAnswer(t, addr, 5, upstreamAnswer)
	h.Close()
	// Nobody holds the port now: the kernel refuses queries at once, and a
	// resolver asks its next nameserver.
	_, err := answer(addr, "gone.cluster.local.")
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("a query after the holder closed: %v, want connection refused", err)
	}
}

func TestStartRefusesAnUpstreamWithoutAPort(t *testing.T) {
	for _, up := range []netip.AddrPort{{}, netip.AddrPortFrom(netip.MustParseAddr("10.96.0.10"), 0)} {
		if _, err := Start(Config{Dir: t.TempDir(), Upstream: up}); err == nil || !strings.Contains(err.Error(), "is not ip:port") {
			t.Errorf("upstream %q: %v, want an error naming it", up, err)
		}
	}
}
