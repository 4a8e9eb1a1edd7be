package skydns

import (
	"net"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/dnstest"
	"github.com/kubesky/kubesky/internal/polltest"
)

// burst sends n queries for name from a UDP socket bound to from, all at
// once, and counts the full answers and the truncated ones that come back
// before the socket has been quiet for half a second.
func burst(t *testing.T, from, server, name string, n int) (full, truncated int) {
	t.Helper()
	laddr, err := net.ResolveUDPAddr("udp", from+":0")
	if err != nil {
		t.Fatal(err)
	}
	raddr, err := net.ResolveUDPAddr("udp", server)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialUDP("udp", laddr, raddr)
	if err != nil {
		t.Fatalf("binding a client to %s: %v", from, err)
	}
	defer conn.Close()
	for i := range n {
		m := new(dns.Msg).SetQuestion(name, dns.TypeA)
		m.Id = uint16(i + 1)
		wire, _ := m.Pack()
		if _, err := conn.Write(wire); err != nil {
			t.Fatal(err)
		}
	}
	buf := make([]byte, 4096)
	for {
		_ = conn.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		k, err := conn.Read(buf)
		if err != nil {
			return full, truncated
		}
		var m dns.Msg
		if err := m.Unpack(buf[:k]); err != nil {
			t.Fatalf("an answer that does not parse: %v", err)
		}
		switch {
		case m.Truncated && len(m.Answer) == 0:
			truncated++
		case len(m.Answer) == 1:
			full++
		default:
			t.Fatalf("unexpected answer %v", &m)
		}
	}
}

// TestResponseRateLimiting floods skydns from 127.0.0.2 while 127.0.0.3
// asks now and then, on the fast path and on the ordinary one.
func TestResponseRateLimiting(t *testing.T) {
	for _, fast := range []bool{true, false} {
		t.Run(map[bool]string{true: "fast path", false: "ordinary path"}[fast], func(t *testing.T) {
			etcd := etcdtest.Start(t)
			put(t, etcd, "web.default.svc.cluster.local.", "a", `{"host":"10.96.0.10"}`)
			cfg := testConfig(etcd.ClientURL())
			cfg.FastPath = fast
			cfg.RRL.ResponsesPerSecond = 10
			cfg.RRL.Slip = 2
			cfg.RRL.IPv4PrefixLen = 32
			cfg.RRL.Exempt = []string{"127.0.0.1"} // the test's own warm-up queries
			d := startDaemon(t, cfg)
			name := "web.default.svc.cluster.local."
			polltest.NoComplaint(t, "the record served", func() string {
				return answerIs(dnstest.Ask(t, "udp", d.DNSAddr(), name, dns.TypeA), dns.RcodeSuccess, "10.96.0.10")
			})

			full, truncated := burst(t, "127.0.0.2", d.DNSAddr(), name, 100)
			t.Logf("flood of 100 from 127.0.0.2: %d answered, %d truncated, %d dropped", full, truncated, 100-full-truncated)
			if full < 10 || full > 20 {
				t.Errorf("the flooding client got %d full answers, want its 10 per second (and what refilled meanwhile)", full)
			}
			if limited := 100 - full; truncated < limited/2-2 || truncated > limited/2+2 {
				t.Errorf("%d truncated answers for %d limited, want every second one slipped", truncated, limited)
			}
			if full, truncated := burst(t, "127.0.0.3", d.DNSAddr(), name, 5); full != 5 || truncated != 0 {
				t.Errorf("the other client got %d full and %d truncated answers of 5, want 5 full", full, truncated)
			}
		})
	}
}
