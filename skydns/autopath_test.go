package skydns

import (
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/dnstest"
	"github.com/kubesky/kubesky/internal/polltest"
)

// startSearchPathCluster starts a daemon with verified pod records, the
// test's client (127.0.0.1) a pod of namespace shop, a service web in
// namespace other, and an upstream answering every A question 192.0.2.1.
func startSearchPathCluster(tb testing.TB, autopath bool) *Daemon {
	upstream := fakeUpstream(tb, "192.0.2.1")
	etcd := etcdtest.Start(tb)
	cfg := testConfig(etcd.ClientURL())
	cfg.Forwarder, cfg.Forward.Upstreams = nil, []string{upstream}
	cfg.PodRecords, cfg.Autopath = "verified", autopath
	d := startDaemon(tb, cfg)
	put(tb, etcd, "web.shop.svc.cluster.local.", "a1", `{"host":"10.96.5.1"}`)
	put(tb, etcd, "web.other.svc.cluster.local.", "a1", `{"host":"10.96.6.1"}`)
	rev := etcd.Put(tb, "/skydns/local/cluster/pod/shop/127-0-0-1", `{"host":"127.0.0.1"}`)
	polltest.NoComplaint(tb, "the snapshot reaches the revision", func() string {
		if d.Mirror().Snapshot().Revision() < rev {
			return "behind"
		}
		return ""
	})
	return d
}

func TestAutopath(t *testing.T) {
	d := startSearchPathCluster(t, true)
	cases := []struct {
		name, qname string
		rcode       int
		want        []string
	}{
		{"a service in another namespace is answered at the first search name, behind a CNAME",
			"web.other.shop.svc.cluster.local.", dns.RcodeSuccess, []string{"web.other.svc.cluster.local.", "10.96.6.1"}},
		{"an external name is answered at the first search name, through the upstream",
			"example.com.shop.svc.cluster.local.", dns.RcodeSuccess, []string{"example.com.", "192.0.2.1"}},
		{"a service in the pod's own namespace is answered as it is",
			"web.shop.svc.cluster.local.", dns.RcodeSuccess, []string{"10.96.5.1"}},
		{"a name under another namespace's search domain is not the pod's search: NXDOMAIN",
			"web.other.elsewhere.svc.cluster.local.", dns.RcodeNameError, nil},
	}
	for _, tc := range cases {
		for _, proto := range []string{"udp", "tcp"} {
			t.Run(tc.name+" over "+proto, func(t *testing.T) {
				for range 2 { // over UDP the second query would be the fast path's
					if msg := answerIs(dnstest.Ask(t, proto, d.DNSAddr(), tc.qname, dns.TypeA), tc.rcode, tc.want...); msg != "" {
						t.Fatal(msg)
					}
				}
			})
		}
	}
}

// TestAutopathAnswersAreTheFastPaths asks a pod's first search-path
// query for an external name three times: the first answer is the
// ordinary path's (the forwarder caches the name), the others the fast
// path's, with the same CNAME chain, rcode and TTLs no longer.
func TestAutopathAnswersAreTheFastPaths(t *testing.T) {
	d := startSearchPathCluster(t, true)
	const qname = "example.com.shop.svc.cluster.local."
	first := dnstest.Ask(t, "udp", d.DNSAddr(), qname, dns.TypeA)
	if msg := answerIs(first, dns.RcodeSuccess, "example.com.", "192.0.2.1"); msg != "" {
		t.Fatal(msg)
	}
	for range 2 {
		answered, passed := fastCounts(t, d)
		got := dnstest.Ask(t, "udp", d.DNSAddr(), qname, dns.TypeA)
		if a, p := fastCounts(t, d); a != answered+1 || p != passed {
			t.Fatalf("fast path answered %v and passed %v, want %v and %v", a, p, answered+1, passed)
		}
		if msg := answerIs(got, first.Rcode, answerData(first)...); msg != "" {
			t.Fatal(msg)
		}
		for i, rr := range got.Answer {
			if want := first.Answer[i].Header(); rr.Header().Name != want.Name || rr.Header().Ttl > want.Ttl || i == 0 && rr.Header().Ttl != want.Ttl {
				t.Fatalf("record %d: %v, want %v with the TTL no longer (the CNAME's the same)", i, rr, first.Answer[i])
			}
		}
	}
}

func TestWithoutAutopathSearchNamesAreNXDOMAIN(t *testing.T) {
	d := startSearchPathCluster(t, false)
	if msg := answerIs(dnstest.Ask(t, "udp", d.DNSAddr(), "web.other.shop.svc.cluster.local.", dns.TypeA), dns.RcodeNameError); msg != "" {
		t.Fatal(msg)
	}
}

func TestAutopathNeedsVerifiedPodRecords(t *testing.T) {
	_, err := parse("--autopath", "--pod-records", "insecure")
	if err == nil || !strings.Contains(err.Error(), "--autopath") {
		t.Fatalf("error %v, want one naming --autopath", err)
	}
}

// searchClient resolves names the way glibc does with a pod's resolv.conf
// (search <ns>.svc.cluster.local svc.cluster.local cluster.local,
// ndots:5): a name with fewer than 5 dots is tried with each search domain
// appended, then as it is; each try asks A and AAAA, and the first try
// answering NOERROR with records ends the lookup.
type searchClient struct {
	addr    string
	search  []string
	queries int // sent so far
}

func (c *searchClient) lookup(tb testing.TB, name string) bool {
	tries := []string{}
	if strings.Count(name, ".") < 5 {
		for _, domain := range c.search {
			tries = append(tries, name+"."+domain)
		}
	}
	tries = append(tries, dns.Fqdn(name))
	for _, try := range tries {
		found := false
		for _, qtype := range []uint16{dns.TypeA, dns.TypeAAAA} {
			m := new(dns.Msg).SetQuestion(try, qtype)
			resp := dnstest.Exchange(tb, "udp", c.addr, m)
			c.queries++
			found = found || (resp.Rcode == dns.RcodeSuccess && len(resp.Answer) > 0)
		}
		if found {
			return true
		}
	}
	return false
}

// BenchmarkSearchPathLookup measures what a pod's search path costs: the
// queries and the time (ns/op) per lookup of an external name and of a
// service in another namespace, with and without --autopath.
func BenchmarkSearchPathLookup(b *testing.B) {
	for _, autopath := range []bool{false, true} {
		d := startSearchPathCluster(b, autopath)
		for _, name := range []string{"example.com", "web.other"} {
			b.Run(name+map[bool]string{false: " without autopath", true: " with autopath"}[autopath], func(b *testing.B) {
				c := &searchClient{addr: d.DNSAddr(), search: []string{"shop.svc.cluster.local.", "svc.cluster.local.", "cluster.local."}}
				for b.Loop() {
					if !c.lookup(b, name) {
						b.Fatalf("%s not found", name)
					}
				}
				b.ReportMetric(float64(c.queries)/float64(b.N), "queries/lookup")
			})
		}
	}
}
