package transfer_test

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/skydns/resolver"
	"github.com/kubesky/kubesky/skydns/snapshot/snapshottest"
	"github.com/kubesky/kubesky/skydns/transfer"
)

// The SOA records of the zones in a snapshot at revision 1.
const (
	soaCluster = "cluster.local. 30 IN SOA ns.dns.cluster.local. hostmaster.cluster.local. 1 7200 1800 86400 30"
	soaReverse = "in-addr.arpa. 30 IN SOA ns.dns.in-addr.arpa. hostmaster.in-addr.arpa. 1 7200 1800 86400 30"
)

// A ClusterIP service as kube2sky writes it: an address, a named port and
// a PTR record.
var service = map[string]string{
	"/skydns/local/cluster/svc/default/web/a1":           `{"host":"10.96.0.1"}`,
	"/skydns/local/cluster/svc/default/web/_tcp/_http/p": `{"host":"web.default.svc.cluster.local.","port":80}`,
	"/skydns/arpa/in-addr/10/96/0/1":                     `{"host":"web.default.svc.cluster.local."}`,
}

func TestRecordsAreWhatTheResolverAnswersAtEveryName(t *testing.T) {
	tests := []struct {
		name    string
		zones   []string
		pods    resolver.PodMode
		nsAddrs []string
		records map[string]string
		zone    string
		want    []string // between the two SOA records, in any order
	}{
		{
			name: "a service's address and port records are at their keys and at every name above them",
			zone: "cluster.local.", records: service,
			want: []string{
				"cluster.local. 30 IN NS ns.dns.cluster.local.",
				"a1.web.default.svc.cluster.local. 30 IN A 10.96.0.1",
				"a1.web.default.svc.cluster.local. 30 IN SRV 10 100 0 a1.web.default.svc.cluster.local.",
				"web.default.svc.cluster.local. 30 IN A 10.96.0.1",
				"web.default.svc.cluster.local. 30 IN SRV 10 50 0 a1.web.default.svc.cluster.local.",
				"web.default.svc.cluster.local. 30 IN SRV 10 50 80 web.default.svc.cluster.local.",
				"p._http._tcp.web.default.svc.cluster.local. 30 IN SRV 10 100 80 web.default.svc.cluster.local.",
				"p._http._tcp.web.default.svc.cluster.local. 30 IN PTR web.default.svc.cluster.local.",
				"_http._tcp.web.default.svc.cluster.local. 30 IN SRV 10 100 80 web.default.svc.cluster.local.",
				"_tcp.web.default.svc.cluster.local. 30 IN SRV 10 100 80 web.default.svc.cluster.local.",
				"default.svc.cluster.local. 30 IN A 10.96.0.1",
				"default.svc.cluster.local. 30 IN SRV 10 50 0 a1.web.default.svc.cluster.local.",
				"default.svc.cluster.local. 30 IN SRV 10 50 80 web.default.svc.cluster.local.",
				"svc.cluster.local. 30 IN A 10.96.0.1",
				"svc.cluster.local. 30 IN SRV 10 50 0 a1.web.default.svc.cluster.local.",
				"svc.cluster.local. 30 IN SRV 10 50 80 web.default.svc.cluster.local.",
			},
		},
		{
			name: "the reverse zone holds the PTR records",
			zone: "in-addr.arpa.", records: service,
			want: []string{
				"in-addr.arpa. 30 IN NS ns.dns.in-addr.arpa.",
				"1.0.96.10.in-addr.arpa. 30 IN PTR web.default.svc.cluster.local.",
			},
		},
		{
			name: "an ExternalName service is a CNAME and nothing else",
			zone: "cluster.local.", records: map[string]string{"/skydns/local/cluster/svc/default/ext/x": `{"host":"example.com."}`},
			want: []string{
				"cluster.local. 30 IN NS ns.dns.cluster.local.",
				"x.ext.default.svc.cluster.local. 30 IN CNAME example.com.",
				"ext.default.svc.cluster.local. 30 IN CNAME example.com.",
				"default.svc.cluster.local. 30 IN CNAME example.com.",
				"svc.cluster.local. 30 IN CNAME example.com.",
			},
		},
		{
			name: "the apex's NS has its configured addresses, and the apex's own records and TXT records are there",
			zone: "cluster.local.", nsAddrs: []string{"10.96.0.10", "fd00::a"},
			records: map[string]string{
				"/skydns/local/cluster/dns-version":      `{"text":"1.1.0"}`,
				"/skydns/local/cluster/dns/apex/a":       `{"host":"192.0.2.1"}`,
				"/skydns/local/cluster/svc/ns1/db/d1":    `{"host":"10.96.0.2","ttl":5}`,
				"/skydns/local/cluster/svc/ns1/*/wild":   `{"host":"10.96.0.3"}`,
				"/skydns/local/cluster/svc/ns1/any/wild": `{"host":"10.96.0.4"}`,
			},
			want: []string{
				"cluster.local. 30 IN NS ns.dns.cluster.local.",
				"cluster.local. 30 IN A 192.0.2.1",
				"cluster.local. 30 IN SRV 10 100 0 a.apex.dns.cluster.local.",
				"ns.dns.cluster.local. 30 IN A 10.96.0.10",
				"ns.dns.cluster.local. 30 IN AAAA fd00::a",
				"dns-version.cluster.local. 30 IN TXT \"1.1.0\"",
				"a.apex.dns.cluster.local. 30 IN A 192.0.2.1",
				"a.apex.dns.cluster.local. 30 IN SRV 10 100 0 a.apex.dns.cluster.local.",
				"apex.dns.cluster.local. 30 IN A 192.0.2.1",
				"apex.dns.cluster.local. 30 IN SRV 10 100 0 a.apex.dns.cluster.local.",
				"dns.cluster.local. 30 IN A 192.0.2.1",
				"dns.cluster.local. 30 IN SRV 10 100 0 a.apex.dns.cluster.local.",
				"d1.db.ns1.svc.cluster.local. 5 IN A 10.96.0.2",
				"d1.db.ns1.svc.cluster.local. 5 IN SRV 10 100 0 d1.db.ns1.svc.cluster.local.",
				"db.ns1.svc.cluster.local. 5 IN A 10.96.0.2",
				"db.ns1.svc.cluster.local. 5 IN SRV 10 100 0 d1.db.ns1.svc.cluster.local.",
				"ns1.svc.cluster.local. 5 IN A 10.96.0.2",
				"ns1.svc.cluster.local. 30 IN A 10.96.0.3",
				"ns1.svc.cluster.local. 30 IN A 10.96.0.4",
				"ns1.svc.cluster.local. 30 IN SRV 10 33 0 wild.any.ns1.svc.cluster.local.",
				"ns1.svc.cluster.local. 30 IN SRV 10 33 0 wild.*.ns1.svc.cluster.local.",
				"ns1.svc.cluster.local. 5 IN SRV 10 33 0 d1.db.ns1.svc.cluster.local.",
				"svc.cluster.local. 5 IN A 10.96.0.2",
				"svc.cluster.local. 30 IN A 10.96.0.3",
				"svc.cluster.local. 30 IN A 10.96.0.4",
				"svc.cluster.local. 30 IN SRV 10 33 0 wild.any.ns1.svc.cluster.local.",
				"svc.cluster.local. 30 IN SRV 10 33 0 wild.*.ns1.svc.cluster.local.",
				"svc.cluster.local. 5 IN SRV 10 33 0 d1.db.ns1.svc.cluster.local.",
			},
		},
		{
			name: "a zone below another holds its own names, and the zone above leaves them out",
			zone: "cluster.local.", zones: []string{"cluster.local.", "sub.cluster.local."},
			records: map[string]string{
				"/skydns/local/cluster/sub/a/x": `{"host":"10.0.0.1"}`,
				"/skydns/local/cluster/top/x":   `{"host":"10.0.0.2"}`,
			},
			want: []string{
				"cluster.local. 30 IN NS ns.dns.cluster.local.",
				"x.top.cluster.local. 30 IN A 10.0.0.2",
				"x.top.cluster.local. 30 IN SRV 10 100 0 x.top.cluster.local.",
				"top.cluster.local. 30 IN A 10.0.0.2",
				"top.cluster.local. 30 IN SRV 10 100 0 x.top.cluster.local.",
			},
		},
		{
			name: "verified pods are their address records",
			zone: "cluster.local.", pods: resolver.PodsVerified,
			records: map[string]string{"/skydns/local/cluster/pod/default/10-244-1-5": `{"host":"10.244.1.5"}`},
			want: []string{
				"cluster.local. 30 IN NS ns.dns.cluster.local.",
				"10-244-1-5.default.pod.cluster.local. 30 IN A 10.244.1.5",
			},
		},
		{
			name:    "records under pod.<zone> are nothing while pods are disabled",
			zone:    "cluster.local.",
			records: map[string]string{"/skydns/local/cluster/pod/default/10-244-1-5": `{"host":"10.244.1.5"}`},
			want:    []string{"cluster.local. 30 IN NS ns.dns.cluster.local."},
		},
		{
			name: "an empty zone is its SOA and NS",
			zone: "cluster.local.", records: map[string]string{},
			want: []string{"cluster.local. 30 IN NS ns.dns.cluster.local."},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := newResolver(t, tc.zones, tc.nsAddrs)
			if tc.pods != "" {
				res = newPodResolver(t, tc.pods)
			}
			rrs, ok := transfer.Records(res, snapshottest.Build(t, "/skydns", tc.records), tc.zone)
			if !ok || len(rrs) < 2 {
				t.Fatalf("Records(%s): %d records, ok %v", tc.zone, len(rrs), ok)
			}
			soa := soaCluster
			if tc.zone == "in-addr.arpa." {
				soa = soaReverse
			}
			checkRecords(t, "first", rrs[:1], []string{soa})
			checkRecords(t, "last", rrs[len(rrs)-1:], []string{soa})
			checkRecords(t, "body", rrs[1:len(rrs)-1], tc.want)
		})
	}
}

func TestRecordsOfANameThatIsNotAnApexAreRefused(t *testing.T) {
	res := newResolver(t, nil, nil)
	snap := snapshottest.Build(t, "/skydns", service)
	for _, name := range []string{"svc.cluster.local.", "example.org.", "local."} {
		if rrs, ok := transfer.Records(res, snap, name); ok {
			t.Errorf("Records(%s): %d records, want none", name, len(rrs))
		}
	}
	if _, ok := transfer.Records(res, snap, "Cluster.Local"); !ok {
		t.Error("Records(Cluster.Local): want the zone, whatever the case and the final dot")
	}
}

func TestEnvelopesStayUnderTheirSize(t *testing.T) {
	var rrs []dns.RR
	for i := range 5000 {
		rr, _ := dns.NewRR("x" + strings.Repeat("y", i%50) + ".cluster.local. 30 IN A 10.0.0.1")
		rrs = append(rrs, rr)
	}
	envs := transfer.Envelopes(rrs)
	total := 0
	for _, e := range envs {
		m := new(dns.Msg)
		m.Answer = e.RR
		if m.Len() > 20<<10 {
			t.Errorf("a message of %d bytes", m.Len())
		}
		total += len(e.RR)
	}
	if total != len(rrs) || len(envs) < 2 {
		t.Fatalf("%d records in %d envelopes, want %d in several", total, len(envs), len(rrs))
	}
}

func newResolver(t testing.TB, zones, nsAddrs []string) *resolver.Resolver {
	t.Helper()
	if zones == nil {
		zones = []string{"cluster.local."}
	}
	var addrs []netip.Addr
	for _, a := range nsAddrs {
		addrs = append(addrs, netip.MustParseAddr(a))
	}
	res, err := resolver.New(resolver.Config{Zones: zones, NSAddrs: addrs})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func newPodResolver(t testing.TB, pods resolver.PodMode) *resolver.Resolver {
	t.Helper()
	res, err := resolver.New(resolver.Config{Zones: []string{"cluster.local."}, Pods: pods})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func checkRecords(t *testing.T, what string, got []dns.RR, want []string) {
	t.Helper()
	g := make([]string, len(got))
	for i, rr := range got {
		g[i] = rr.String()
	}
	w := make([]string, len(want))
	for i, text := range want {
		rr, err := dns.NewRR(text)
		if err != nil {
			t.Fatalf("bad expected record %q: %v", text, err)
		}
		w[i] = rr.String()
	}
	slices.Sort(g)
	slices.Sort(w)
	if !slices.Equal(g, w) {
		t.Errorf("%s:\n got: %s\nwant: %s", what, strings.Join(g, "\n      "), strings.Join(w, "\n      "))
	}
}
