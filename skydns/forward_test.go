package skydns

import (
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/dnstest"
	"github.com/kubesky/kubesky/internal/polltest"
)

// fakeUpstream is a DNS server on 127.0.0.1 answering every question,
// whatever its name, with an A record holding addr.
func fakeUpstream(t testing.TB, addr string) string {
	t.Helper()
	ip := net.ParseIP(addr)
	return startUpstream(t, func(q *dns.Msg) *dns.Msg {
		resp := new(dns.Msg).SetReply(q)
		hdr := dns.RR_Header{Name: q.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}
		resp.Answer = []dns.RR{&dns.A{Hdr: hdr, A: ip}}
		return resp
	})
}

// startUpstream is a DNS server on 127.0.0.1 answering with answer,
// stopped when the test ends; it returns its address.
func startUpstream(t testing.TB, answer func(q *dns.Msg) *dns.Msg) string {
	t.Helper()
	return dnstest.StartServer(t, dnstest.Reply(answer))
}

// TestForwardingIsWired checks the three places the forwarder plugs in:
// names outside the zones, CNAMEs leaving the zones, and stub domains
// read from etcd.
func TestForwardingIsWired(t *testing.T) {
	upstream := fakeUpstream(t, "192.0.2.1")
	stub := fakeUpstream(t, "192.0.2.99")
	etcd := etcdtest.Start(t)
	cfg := testConfig(etcd.ClientURL())
	cfg.Forwarder = nil
	cfg.Forward.Upstreams = []string{upstream}
	d := startDaemon(t, cfg)

	t.Run("a name outside the zones is forwarded upstream", func(t *testing.T) {
		if msg := answerIs(dnstest.Ask(t, "udp", d.DNSAddr(), "example.com.", dns.TypeA), dns.RcodeSuccess, "192.0.2.1"); msg != "" {
			t.Fatal(msg)
		}
	})
	t.Run("an ExternalName CNAME is chased upstream", func(t *testing.T) {
		put(t, etcd, "ext.default.svc.cluster.local.", "e1", `{"host":"example.com."}`)
		polltest.NoComplaint(t, "chased answer", func() string {
			return answerIs(dnstest.Ask(t, "udp", d.DNSAddr(), "ext.default.svc.cluster.local.", dns.TypeA), dns.RcodeSuccess, "example.com.", "192.0.2.1")
		})
	})
	t.Run("a stub domain written to etcd routes its names to its server", func(t *testing.T) {
		host, port, _ := net.SplitHostPort(stub)
		put(t, etcd, "example.corp.stub.dns.cluster.local.", "ns1", fmt.Sprintf(`{"host":%q,"port":%s}`, host, port))
		polltest.NoComplaint(t, "stub answer", func() string {
			return answerIs(dnstest.Ask(t, "udp", d.DNSAddr(), "www.example.corp.", dns.TypeA), dns.RcodeSuccess, "192.0.2.99")
		})
	})
	t.Run("the forwarder's metrics are on /metrics", func(t *testing.T) {
		_, body := httpGet(t, d, "/metrics")
		if !strings.Contains(body, "\nskydns_forward_") {
			t.Fatal("no skydns_forward_ metrics")
		}
	})
}

// TestReverseNamesFallThroughToTheUpstreams checks --reverse-fallthrough:
// a PTR question no record answers goes to the upstreams (as kube-dns and
// CoreDNS's default Corefile do), on the fast path's socket too; one
// kube2sky wrote is answered from etcd; a client that does not ask for
// recursion, or a skydns with the flag off, gets NXDOMAIN.
func TestReverseNamesFallThroughToTheUpstreams(t *testing.T) {
	upstream := startUpstream(t, func(q *dns.Msg) *dns.Msg {
		resp := new(dns.Msg).SetReply(q)
		hdr := dns.RR_Header{Name: q.Question[0].Name, Rrtype: dns.TypePTR, Class: dns.ClassINET, Ttl: 60}
		resp.Answer = []dns.RR{&dns.PTR{Hdr: hdr, Ptr: "dns.google."}}
		return resp
	})
	etcd := etcdtest.Start(t)
	etcd.Put(t, contract.Key(contract.DefaultPrefix, "10.0.96.10.in-addr.arpa."), `{"host":"kube-dns.kube-system.svc.cluster.local."}`)
	start := func(reverseFallthrough bool) *Daemon {
		cfg := testConfig(etcd.ClientURL())
		cfg.Forwarder = nil
		cfg.Forward.Upstreams = []string{upstream}
		cfg.ReverseFallthrough = reverseFallthrough
		return startDaemon(t, cfg)
	}
	ptr := func(d *Daemon, name string, rd bool) (int, string) {
		q := new(dns.Msg).SetQuestion(name, dns.TypePTR)
		q.RecursionDesired = rd
		resp := dnstest.Exchange(t, "udp", d.DNSAddr(), q)
		if len(resp.Answer) != 1 {
			return resp.Rcode, ""
		}
		return resp.Rcode, resp.Answer[0].(*dns.PTR).Ptr
	}
	on, off := start(true), start(false)
	for _, tc := range []struct {
		name       string
		d          *Daemon
		qname      string
		rd         bool
		rcode      int
		wantTarget string
	}{
		{"an address no record names is forwarded", on, "8.8.8.8.in-addr.arpa.", true, dns.RcodeSuccess, "dns.google."},
		{"it is forwarded again, not cached as NXDOMAIN", on, "8.8.8.8.in-addr.arpa.", true, dns.RcodeSuccess, "dns.google."},
		{"an address kube2sky wrote is answered from etcd", on, "10.0.96.10.in-addr.arpa.", true, dns.RcodeSuccess, "kube-dns.kube-system.svc.cluster.local."},
		{"without recursion desired the zone denies it", on, "8.8.8.8.in-addr.arpa.", false, dns.RcodeNameError, ""},
		{"with --reverse-fallthrough=false the zone denies it", off, "8.8.8.8.in-addr.arpa.", true, dns.RcodeNameError, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			polltest.NoComplaint(t, tc.qname, func() string {
				if rcode, target := ptr(tc.d, tc.qname, tc.rd); rcode != tc.rcode || target != tc.wantTarget {
					return fmt.Sprintf("%s PTR: %s %q, want %s %q", tc.qname, dns.RcodeToString[rcode], target, dns.RcodeToString[tc.rcode], tc.wantTarget)
				}
				return ""
			})
		})
	}
}

// TestZoneNamesFallThroughToTheUpstreams checks --zone-fallthrough: a name
// of the listed zone that no record answers goes to the upstreams (as
// CoreDNS's kubernetes fallthrough does), on the fast path's socket too;
// a name kube2sky wrote is answered from etcd; another zone skydns
// answers, and a client that does not ask for recursion, get NXDOMAIN; a
// zone skydns does not answer is refused by name.
func TestZoneNamesFallThroughToTheUpstreams(t *testing.T) {
	upstream := startUpstream(t, func(q *dns.Msg) *dns.Msg {
		resp := new(dns.Msg).SetReply(q)
		hdr := dns.RR_Header{Name: q.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}
		resp.Answer = []dns.RR{&dns.A{Hdr: hdr, A: net.IPv4(192, 0, 2, 7)}}
		return resp
	})
	etcd := etcdtest.Start(t)
	etcd.Put(t, contract.Key(contract.DefaultPrefix, "web.default.svc.cluster.local."), `{"host":"10.0.0.5"}`)
	cfg := testConfig(etcd.ClientURL())
	cfg.Forwarder = nil
	cfg.Forward.Upstreams = []string{upstream}
	cfg.Zones = []string{"cluster.local.", "corp.example."}
	cfg.ZoneFallthrough = []string{"Cluster.Local"}
	d := startDaemon(t, cfg)
	for _, tc := range []struct {
		name, qname string
		rd          bool
		rcode       int
		want        string
	}{
		{"a name no record answers is forwarded", "db.legacy.cluster.local.", true, dns.RcodeSuccess, "192.0.2.7"},
		{"it is forwarded again, not cached as NXDOMAIN", "db.legacy.cluster.local.", true, dns.RcodeSuccess, "192.0.2.7"},
		{"a name kube2sky wrote is answered from etcd", "web.default.svc.cluster.local.", true, dns.RcodeSuccess, "10.0.0.5"},
		{"without recursion desired the zone denies it", "db.legacy.cluster.local.", false, dns.RcodeNameError, ""},
		{"a zone not listed denies it", "db.corp.example.", true, dns.RcodeNameError, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			polltest.NoComplaint(t, tc.qname, func() string {
				q := new(dns.Msg).SetQuestion(tc.qname, dns.TypeA)
				q.RecursionDesired = tc.rd
				return answerIs(dnstest.Exchange(t, "udp", d.DNSAddr(), q), tc.rcode, strings.Fields(tc.want)...)
			})
		})
	}
	bad := testConfig(etcd.ClientURL())
	bad.ZoneFallthrough = []string{"svc.cluster.local"}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), `--zone-fallthrough: "svc.cluster.local" is not one of the zones answered`) {
		t.Errorf("--zone-fallthrough=svc.cluster.local: error %v, want one naming the flag and the zone", err)
	}
}
