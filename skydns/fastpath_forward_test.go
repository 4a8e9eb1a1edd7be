package skydns

import (
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/dnstest"
	"github.com/kubesky/kubesky/internal/polltest"
	"github.com/kubesky/kubesky/skydns/forward"
)

// countingUpstream is an upstream on 127.0.0.1 answering every A
// question with addr, TTL 3600, counting the queries for example.com it
// receives (skydns's loop probes aside).
func countingUpstream(t *testing.T, addr string) (string, *atomic.Int64) {
	t.Helper()
	var queries atomic.Int64
	ip := net.ParseIP(addr)
	server := startUpstream(t, func(q *dns.Msg) *dns.Msg {
		if strings.EqualFold(q.Question[0].Name, "example.com.") {
			queries.Add(1)
		}
		resp := new(dns.Msg).SetReply(q)
		hdr := dns.RR_Header{Name: q.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 3600}
		resp.Answer = []dns.RR{&dns.A{Hdr: hdr, A: ip}}
		return resp
	})
	return server, &queries
}

// TestCachedForwardedAnswersTakeTheFastPath asks a name outside the zones
// twice: the second answer comes from the fast path, counted as a cache
// hit, the question's case kept; a query without RD or from a client the
// ACL leaves out still gets REFUSED; a new upstream, ACL or stub domain
// in etcd applies at once, though the answer served had an hour to live.
func TestCachedForwardedAnswersTakeTheFastPath(t *testing.T) {
	first, firstQueries := countingUpstream(t, "192.0.2.1")
	second, _ := countingUpstream(t, "192.0.2.2")
	stub, _ := countingUpstream(t, "192.0.2.99")
	etcd := etcdtest.Start(t)
	cfg := testConfig(etcd.ClientURL())
	cfg.Forwarder = nil
	cfg.Forward.Upstreams = []string{first}
	d := startDaemon(t, cfg)
	ask := func(proto, name string, rd bool) *dns.Msg {
		q := new(dns.Msg).SetQuestion(name, dns.TypeA)
		q.RecursionDesired = rd
		return dnstest.Exchange(t, proto, d.DNSAddr(), q)
	}
	answers := func(rcode int, want ...string) func() string {
		return func() string { return answerIs(ask("udp", "example.com.", true), rcode, want...) }
	}
	setting := func(flag, value string) {
		etcd.Put(t, forward.ConfigKey(contract.DefaultPrefix, flag, "cluster.local."), string(contract.Record{Text: value}.Encode()))
	}

	if msg := answers(dns.RcodeSuccess, "192.0.2.1")(); msg != "" {
		t.Fatal(msg)
	}
	t.Run("a cached answer is the fast path's, counted as a hit", func(t *testing.T) {
		answered, passed := fastCounts(t, d)
		hits := metric(t, d, "skydns_forward_cache_hits_total")
		resp := ask("udp", "ExAmple.COM.", true)
		if msg := answerIs(resp, dns.RcodeSuccess, "192.0.2.1"); msg != "" {
			t.Fatal(msg)
		}
		if resp.Question[0].Name != "ExAmple.COM." || !resp.RecursionAvailable || !resp.RecursionDesired || resp.Answer[0].Header().Ttl > 3600 {
			t.Fatalf("want the question as asked, RA and RD, TTL at most 3600:\n%v", resp)
		}
		if a, p := fastCounts(t, d); a != answered+1 || p != passed {
			t.Fatalf("fast path answered %v and passed %v, want %v and %v", a, p, answered+1, passed)
		}
		if h := metric(t, d, "skydns_forward_cache_hits_total"); h != hits+1 {
			t.Fatalf("skydns_forward_cache_hits_total %v, want %v", h, hits+1)
		}
		if msg := answerIs(ask("tcp", "example.COM.", true), dns.RcodeSuccess, "192.0.2.1"); msg != "" {
			t.Fatal("over TCP: " + msg)
		}
		if n := firstQueries.Load(); n != 1 {
			t.Fatalf("the upstream was asked %d times, want once", n)
		}
	})
	t.Run("a query without RD is refused", func(t *testing.T) {
		if msg := answerIs(ask("udp", "example.com.", false), dns.RcodeRefused); msg != "" {
			t.Fatal(msg)
		}
	})
	t.Run("a client the new ACL leaves out is refused", func(t *testing.T) {
		setting(forward.FlagAllowRecursion, "192.0.2.0/24")
		polltest.NoComplaint(t, "127.0.0.1 refused", answers(dns.RcodeRefused))
		if resp := ask("udp", "example.com.", true); resp.RecursionAvailable {
			t.Fatal("RA set for a client that may not recurse")
		}
		setting(forward.FlagAllowRecursion, "127.0.0.0/8")
		polltest.NoComplaint(t, "127.0.0.1 answered again", answers(dns.RcodeSuccess, "192.0.2.1"))
	})
	t.Run("a new upstream answers at once", func(t *testing.T) {
		setting(forward.FlagUpstream, second)
		polltest.NoComplaint(t, "the second upstream answers", answers(dns.RcodeSuccess, "192.0.2.2"))
	})
	t.Run("a new stub domain answers at once", func(t *testing.T) {
		host, port, _ := net.SplitHostPort(stub)
		put(t, etcd, "com.stub.dns.cluster.local.", "ns1", fmt.Sprintf(`{"host":%q,"port":%s}`, host, port))
		polltest.NoComplaint(t, "the stub answers", answers(dns.RcodeSuccess, "192.0.2.99"))
	})
}
