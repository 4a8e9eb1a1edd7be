package skydns

import (
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/dnstest"
)

// fastCounts reads how many UDP queries the fast path answered and passed
// on.
func fastCounts(t *testing.T, d *Daemon) (answered, passed float64) {
	t.Helper()
	return metric(t, d, "skydns_dns_fast_path_answers_total"), metric(t, d, "skydns_dns_fast_path_passed_total")
}

func TestFastPathAnswersPlainQueries(t *testing.T) {
	etcd, d := startWithEtcd(t)
	waitRevision(t, d, put(t, etcd, web, "a1", `{"host":"10.96.0.10"}`))
	before, passedBefore := fastCounts(t, d)
	for i, edns := range []uint16{0, 1232} {
		q := new(dns.Msg).SetQuestion("WeB.default.svc.CLUSTER.local.", dns.TypeA)
		if edns > 0 {
			q.SetEdns0(edns, false)
		}
		resp := dnstest.Exchange(t, "udp", d.DNSAddr(), q)
		if msg := answerIs(resp, dns.RcodeSuccess, "10.96.0.10"); msg != "" {
			t.Fatal(msg)
		}
		if resp.Question[0].Name != q.Question[0].Name || !resp.Authoritative || !resp.RecursionDesired {
			t.Fatalf("question %q, AA %v, RD %v: want the question as asked, AA and RD", resp.Question[0].Name, resp.Authoritative, resp.RecursionDesired)
		}
		if (resp.IsEdns0() != nil) != (edns > 0) {
			t.Fatalf("OPT in the answer: %v, want it exactly when the query has one", resp.IsEdns0() != nil)
		}
		if answered, passed := fastCounts(t, d); answered != before+float64(i+1) || passed != passedBefore {
			t.Fatalf("fast path answered %v and passed %v, want %v and %v", answered, passed, before+float64(i+1), passedBefore)
		}
	}
	if v := metricSum(t, d, "skydns_dns_requests_total", `zone="cluster.local."`, `proto="udp"`, `family="1"`, `type="A"`); v < 2 {
		t.Fatalf("requests for A in cluster.local. = %v: the fast path's answers are not counted", v)
	}
	if v := metricSum(t, d, "skydns_dns_responses_total", `zone="cluster.local."`, `rcode="NOERROR"`, `plugin="skydns"`); v < 2 {
		t.Fatalf("NOERROR responses in cluster.local. = %v: the fast path's answers are not counted", v)
	}
}

func TestFastPathSeesAPutAtOnce(t *testing.T) {
	etcd, d := startWithEtcd(t)
	waitRevision(t, d, put(t, etcd, web, "a1", `{"host":"10.96.0.10"}`))
	nxName := "nope.default.svc.cluster.local."
	for range 2 { // cached after the first
		if msg := answerIs(dnstest.Ask(t, "udp", d.DNSAddr(), web, dns.TypeA), dns.RcodeSuccess, "10.96.0.10"); msg != "" {
			t.Fatal(msg)
		}
		if msg := answerIs(dnstest.Ask(t, "udp", d.DNSAddr(), nxName, dns.TypeA), dns.RcodeNameError); msg != "" {
			t.Fatal(msg)
		}
	}
	answered, _ := fastCounts(t, d)
	waitRevision(t, d, put(t, etcd, web, "a2", `{"host":"10.96.0.11"}`))
	waitRevision(t, d, put(t, etcd, nxName, "x", `{"host":"10.96.0.12"}`))
	t.Run("a name given one more record answers both", func(t *testing.T) {
		if msg := answerIs(dnstest.Ask(t, "udp", d.DNSAddr(), web, dns.TypeA), dns.RcodeSuccess, "10.96.0.10", "10.96.0.11"); msg != "" {
			t.Fatal(msg)
		}
	})
	t.Run("a name that did not exist answers its record", func(t *testing.T) {
		if msg := answerIs(dnstest.Ask(t, "udp", d.DNSAddr(), nxName, dns.TypeA), dns.RcodeSuccess, "10.96.0.12"); msg != "" {
			t.Fatal(msg)
		}
	})
	if now, _ := fastCounts(t, d); now != answered+2 {
		t.Fatalf("fast path answered %v queries after the puts, want 2", now-answered)
	}
}

func TestFastPathPassesTheRestOn(t *testing.T) {
	etcd, d := startWithEtcd(t)
	putMany(t, etcd, "big.default.svc.cluster.local.", 40) // 666 bytes without OPT
	put(t, etcd, "ext.default.svc.cluster.local.", "e", `{"host":"example.com."}`)
	waitRevision(t, d, put(t, etcd, web, "a1", `{"host":"10.96.0.10"}`))
	do := new(dns.Msg).SetQuestion(web, dns.TypeA).SetEdns0(1232, true)
	cookie := new(dns.Msg).SetQuestion(web, dns.TypeA).SetEdns0(1232, false)
	cookie.IsEdns0().Option = []dns.EDNS0{&dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: "0102030405060708"}}
	chaos := new(dns.Msg).SetQuestion(web, dns.TypeA)
	chaos.Question[0].Qclass = dns.ClassCHAOS
	tests := []struct {
		name  string
		q     *dns.Msg
		check func(*dns.Msg) string
	}{
		{"a query with an EDNS cookie", cookie, func(m *dns.Msg) string { return answerIs(m, dns.RcodeSuccess, "10.96.0.10") }},
		{"a query of class CHAOS", chaos, func(m *dns.Msg) string { return answerIs(m, dns.RcodeRefused) }},
		{"a name outside the zones", new(dns.Msg).SetQuestion("example.com.", dns.TypeA),
			func(m *dns.Msg) string { return answerIs(m, dns.RcodeRefused) }},
		{"an answer larger than 512 bytes without EDNS", new(dns.Msg).SetQuestion("big.default.svc.cluster.local.", dns.TypeA),
			func(m *dns.Msg) string {
				if !m.Truncated {
					return "want TC"
				}
				return ""
			}},
		{"a CNAME leaving the zones", new(dns.Msg).SetQuestion("ext.default.svc.cluster.local.", dns.TypeA),
			func(m *dns.Msg) string { return answerIs(m, dns.RcodeSuccess, "example.com.") }},
	}
	for _, tc := range tests {
		t.Run(tc.name+" takes the ordinary path", func(t *testing.T) {
			answered, passed := fastCounts(t, d)
			resp := dnstest.Exchange(t, "udp", d.DNSAddr(), tc.q)
			if msg := tc.check(resp); msg != "" {
				t.Fatalf("%s\n%v", msg, resp)
			}
			if a, p := fastCounts(t, d); a != answered || p != passed+1 {
				t.Fatalf("fast path answered %v more and passed %v more, want 0 and 1", a-answered, p-passed)
			}
		})
	}
	t.Run("a TCP query is answered by the fast path, in full", func(t *testing.T) {
		answered, passed := fastCounts(t, d)
		if msg := answerIs(dnstest.Ask(t, "tcp", d.DNSAddr(), web, dns.TypeA), dns.RcodeSuccess, "10.96.0.10"); msg != "" {
			t.Fatal(msg)
		}
		resp := dnstest.Ask(t, "tcp", d.DNSAddr(), "big.default.svc.cluster.local.", dns.TypeA) // 666 bytes, no EDNS
		if resp.Truncated || len(resp.Answer) != 40 {
			t.Fatalf("want all 40 records, not truncated:\n%v", resp)
		}
		if a, p := fastCounts(t, d); a != answered+2 || p != passed {
			t.Fatalf("fast path counts: answered %v→%v, passed %v→%v; want 2 more answered", answered, a, passed, p)
		}
	})
	t.Run("a query with the DO bit is answered by the fast path, without DNSSEC in a zone not signed", func(t *testing.T) {
		answered, passed := fastCounts(t, d)
		resp := dnstest.Exchange(t, "udp", d.DNSAddr(), do)
		if opt := resp.IsEdns0(); opt == nil || opt.Do() {
			t.Fatalf("want an OPT record without DO (no DNSSEC here):\n%v", resp)
		}
		if msg := answerIs(resp, dns.RcodeSuccess, "10.96.0.10"); msg != "" {
			t.Fatal(msg)
		}
		if a, p := fastCounts(t, d); a != answered+1 || p != passed {
			t.Fatalf("fast path counts: answered %v→%v, passed %v→%v; want 1 more answered", answered, a, passed, p)
		}
	})
	t.Run("a TCP query that is not plain is passed on", func(t *testing.T) {
		answered, passed := fastCounts(t, d)
		resp := dnstest.Exchange(t, "tcp", d.DNSAddr(), cookie)
		if msg := answerIs(resp, dns.RcodeSuccess, "10.96.0.10"); msg != "" {
			t.Fatal(msg)
		}
		if a, p := fastCounts(t, d); a != answered || p != passed+1 {
			t.Fatalf("fast path counts: answered %v→%v, passed %v→%v; want 1 more passed", answered, a, passed, p)
		}
	})
}

func TestFastPathCanBeTurnedOff(t *testing.T) {
	etcd := etcdtest.Start(t)
	cfg := testConfig(etcd.ClientURL())
	cfg.FastPath = false
	cfg.UDPSockets = 3
	d := startDaemon(t, cfg)
	waitRevision(t, d, put(t, etcd, web, "a1", `{"host":"10.96.0.10"}`))
	for range 10 { // from new sockets: spread over the three
		resp := dnstest.Ask(t, "udp", d.DNSAddr(), web, dns.TypeA)
		if msg := answerIs(resp, dns.RcodeSuccess, "10.96.0.10"); msg != "" {
			t.Fatal(msg)
		}
	}
	if answered, passed := fastCounts(t, d); answered != 0 || passed != 0 {
		t.Fatalf("fast path answered %v and passed %v with --fast-path=false", answered, passed)
	}
	if v := metricSum(t, d, "skydns_dns_responses_total", `zone="cluster.local."`, `rcode="NOERROR"`); v != 10 {
		t.Fatalf("NOERROR responses in cluster.local. = %v, want 10", v)
	}
}

func TestARecordsHugeTTLIsServedCapped(t *testing.T) {
	etcd, d := startWithEtcd(t)
	waitRevision(t, d, put(t, etcd, web, "a1", `{"host":"10.96.0.10","ttl":901209123}`))
	answered, _ := fastCounts(t, d)
	check := func(t *testing.T, resp *dns.Msg) {
		t.Helper()
		if msg := answerIs(resp, dns.RcodeSuccess, "10.96.0.10"); msg != "" {
			t.Fatal(msg)
		}
		if ttl := resp.Answer[0].Header().Ttl; ttl != 3600 {
			t.Fatalf("TTL %d, want 3600 (--max-ttl's default)", ttl)
		}
	}
	t.Run("on the fast path, packed and then from the cache", func(t *testing.T) {
		for range 2 {
			check(t, dnstest.Ask(t, "udp", d.DNSAddr(), web, dns.TypeA))
		}
		if now, _ := fastCounts(t, d); now != answered+2 {
			t.Fatalf("fast path answered %v queries, want 2", now-answered)
		}
	})
	t.Run("on the ordinary path", func(t *testing.T) {
		check(t, dnstest.Ask(t, "tcp", d.DNSAddr(), web, dns.TypeA))
	})
}
