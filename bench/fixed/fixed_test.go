package fixed_test

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/bench/fixed"
	"github.com/kubesky/kubesky/internal/dnstest"
	"github.com/kubesky/kubesky/skydns/dnsserver"
)

func startFixed(t *testing.T) *dnsserver.Server {
	t.Helper()
	h, err := fixed.NewResponder(netip.MustParseAddr("10.0.0.1"), 30)
	if err != nil {
		t.Fatal(err)
	}
	s, err := fixed.Start("127.0.0.1:0", h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return s
}

func TestEveryQueryGetsTheFixedAnswer(t *testing.T) {
	s := startFixed(t)
	for _, proto := range []string{"udp", "tcp"} {
		t.Run("over "+proto, func(t *testing.T) {
			for _, q := range []struct {
				name  string
				qtype uint16
			}{{"web.default.svc.cluster.local.", dns.TypeA}, {"Other.Example.", dns.TypeAAAA}} {
				m := new(dns.Msg).SetQuestion(q.name, q.qtype)
				resp := dnstest.Exchange(t, proto, s.Addr(), m)
				if len(resp.Answer) != 1 || resp.Answer[0].String() != q.name+"\t30\tIN\tA\t10.0.0.1" {
					t.Fatalf("answer for %s: %v", q.name, resp.Answer)
				}
				if resp.Id != m.Id || resp.Rcode != dns.RcodeSuccess {
					t.Fatalf("id %d (want %d), rcode %d", resp.Id, m.Id, resp.Rcode)
				}
			}
		})
	}
}

func TestAQueryWithoutAQuestionGetsFormErr(t *testing.T) {
	s := startFixed(t)
	m := new(dns.Msg)
	m.Id = 7
	resp := dnstest.Exchange(t, "udp", s.Addr(), m)
	if resp.Rcode != dns.RcodeFormatError {
		t.Fatalf("rcode %s, want FORMERR", dns.RcodeToString[resp.Rcode])
	}
}

func TestNewResponderRejectsIPv6(t *testing.T) {
	if _, err := fixed.NewResponder(netip.MustParseAddr("fd00::1"), 30); err == nil {
		t.Fatal("want an error for an IPv6 answer")
	}
}

func TestStartRejectsAnAddressInUse(t *testing.T) {
	s := startFixed(t)
	h, _ := fixed.NewResponder(netip.MustParseAddr("10.0.0.1"), 30)
	if _, err := fixed.Start(s.Addr(), h); err == nil {
		t.Fatal("want an error for a port in use")
	}
}
