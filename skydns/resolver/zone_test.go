package resolver_test

import (
	"net/netip"
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/skydns/resolver"
	"github.com/kubesky/kubesky/skydns/snapshot/snapshottest"
)

const soa4 = "in-addr.arpa. 30 IN SOA ns.dns.in-addr.arpa. hostmaster.in-addr.arpa. 1 7200 1800 86400 30"

func TestApex(t *testing.T) {
	runCases(t, newResolver(t), clusterSnapshot(t), []testCase{
		{
			name: "the apex has a synthesized SOA whose serial is the snapshot revision", qname: "cluster.local.", qtype: dns.TypeSOA,
			answer: []string{soa},
		},
		{
			name: "the apex SOA is owned by the name as asked", qname: "Cluster.LOCAL.", qtype: dns.TypeSOA,
			answer: []string{"Cluster.LOCAL. 30 IN SOA ns.dns.cluster.local. hostmaster.cluster.local. 1 7200 1800 86400 30"},
		},
		{
			name: "the apex NS records come from dns/ns, with glue for the addresses", qname: "cluster.local.", qtype: dns.TypeNS,
			answer: []string{
				"cluster.local. 30 IN NS ns1.ns.dns.cluster.local.",
				"cluster.local. 60 IN NS ns2.ns.dns.cluster.local.",
				"cluster.local. 30 IN NS ns.example.net.",
			},
			extra: []string{"ns1.ns.dns.cluster.local. 30 IN A 10.96.0.10", "ns2.ns.dns.cluster.local. 60 IN AAAA fd00::10"},
		},
		{
			name: "a name server's own name answers its address", qname: "ns1.ns.dns.cluster.local.", qtype: dns.TypeA,
			answer: []string{"ns1.ns.dns.cluster.local. 30 IN A 10.96.0.10"},
		},
		{
			name: "the apex's own addresses come from dns/apex, not the whole zone", qname: "cluster.local.", qtype: dns.TypeA,
			answer: []string{"cluster.local. 30 IN A 10.96.0.53"},
		},
		{
			name: "the apex's own MX comes from dns/apex", qname: "cluster.local.", qtype: dns.TypeMX,
			answer: []string{"cluster.local. 30 IN MX 10 mx.example.net."},
		},
		{
			name: "the apex is NODATA for a type it has no records of", qname: "cluster.local.", qtype: dns.TypeTXT,
			ns: []string{soa},
		},
		{
			name: "SOA below the apex is NODATA", qname: "web.default.svc.cluster.local.", qtype: dns.TypeSOA,
			ns: []string{soa},
		},
		{
			name: "NS below the apex is NODATA", qname: "web.default.svc.cluster.local.", qtype: dns.TypeNS,
			ns: []string{soa},
		},
		{
			name: "NS for a missing name is NXDOMAIN", qname: "nope.cluster.local.", qtype: dns.TypeNS,
			rcode: dns.RcodeNameError, ns: []string{soa},
		},
		{
			name: "an unsupported type on an existing name is NODATA", qname: "web.default.svc.cluster.local.", qtype: dns.TypeHINFO,
			ns: []string{soa},
		},
		{
			name: "an empty non-terminal is NODATA", qname: "groups.cluster.local.", qtype: dns.TypeTXT,
			ns: []string{soa},
		},
	})
}

func TestAny(t *testing.T) {
	runCases(t, newResolver(t), clusterSnapshot(t), []testCase{
		{
			name: "ANY is answered minimally with one HINFO record", qname: "web.default.svc.cluster.local.", qtype: dns.TypeANY,
			answer: []string{`web.default.svc.cluster.local. 30 IN HINFO "RFC8482" ""`},
		},
		{
			name: "ANY at the apex is answered minimally", qname: "cluster.local.", qtype: dns.TypeANY,
			answer: []string{`cluster.local. 30 IN HINFO "RFC8482" ""`},
		},
		{
			name: "ANY for a missing name is NXDOMAIN", qname: "nope.cluster.local.", qtype: dns.TypeANY,
			rcode: dns.RcodeNameError, ns: []string{soa},
		},
	})
}

func TestReverse(t *testing.T) {
	runCases(t, newResolver(t), clusterSnapshot(t), []testCase{
		{
			name: "an IPv4 PTR names the service", qname: "1.0.96.10.in-addr.arpa.", qtype: dns.TypePTR,
			answer: []string{"1.0.96.10.in-addr.arpa. 30 IN PTR web.default.svc.cluster.local."},
		},
		{
			name: "an IPv6 PTR names the service", qname: "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.6.9.0.0.0.1.0.0.0.0.d.f.ip6.arpa.", qtype: dns.TypePTR,
			answer: []string{"1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.6.9.0.0.0.1.0.0.0.0.d.f.ip6.arpa. 30 IN PTR web.default.svc.cluster.local."},
		},
		{
			name: "an unknown address is NXDOMAIN with the reverse zone's SOA", qname: "2.0.96.10.in-addr.arpa.", qtype: dns.TypePTR,
			rcode: dns.RcodeNameError, ns: []string{soa4},
		},
		{
			name: "a partial reverse name is an empty non-terminal: NODATA", qname: "0.96.10.in-addr.arpa.", qtype: dns.TypePTR,
			ns: []string{soa4},
		},
		{
			name: "reverse zones hold only PTR data", qname: "1.0.96.10.in-addr.arpa.", qtype: dns.TypeA,
			ns: []string{soa4},
		},
		{
			name: "a reverse zone apex has its SOA", qname: "in-addr.arpa.", qtype: dns.TypeSOA,
			answer: []string{soa4},
		},
		{
			name: "PTR only reads the exact key", qname: "web.default.svc.cluster.local.", qtype: dns.TypePTR,
			ns: []string{soa},
		},
	})
}

// TestSynthesizedNS shows the apex NS RRset when no record lives under
// dns/ns: ns.dns.<zone>, resolving to the configured addresses.
func TestSynthesizedNS(t *testing.T) {
	r, err := resolver.New(resolver.Config{
		Zones:   []string{"cluster.local."},
		NSAddrs: []netip.Addr{netip.MustParseAddr("10.96.0.10"), netip.MustParseAddr("fd00:10:96::a")},
	})
	if err != nil {
		t.Fatal(err)
	}
	snap := snapshottest.Build(t, "/skydns", map[string]string{
		"/skydns/local/cluster/svc/default/web/a1": `{"host":"10.96.0.1"}`,
	})
	runCases(t, r, snap, []testCase{
		{
			name: "the apex NS names the SOA's primary server, with its addresses as glue", qname: "cluster.local.", qtype: dns.TypeNS,
			answer: []string{"cluster.local. 30 IN NS ns.dns.cluster.local."},
			extra:  []string{"ns.dns.cluster.local. 30 IN A 10.96.0.10", "ns.dns.cluster.local. 30 IN AAAA fd00:10:96::a"},
		},
		{
			name: "the name server's name answers A with the configured IPv4 address", qname: "NS.dns.cluster.local.", qtype: dns.TypeA,
			answer: []string{"NS.dns.cluster.local. 30 IN A 10.96.0.10"},
		},
		{
			name: "the name server's name answers AAAA with the configured IPv6 address", qname: "ns.dns.cluster.local.", qtype: dns.TypeAAAA,
			answer: []string{"ns.dns.cluster.local. 30 IN AAAA fd00:10:96::a"},
		},
		{
			name: "the name server's name exists for other types: NODATA", qname: "ns.dns.cluster.local.", qtype: dns.TypeTXT,
			ns: []string{soa},
		},
		{
			name: "a reverse zone's apex NS is synthesized too", qname: "in-addr.arpa.", qtype: dns.TypeNS,
			answer: []string{"in-addr.arpa. 30 IN NS ns.dns.in-addr.arpa."},
			extra:  []string{"ns.dns.in-addr.arpa. 30 IN A 10.96.0.10", "ns.dns.in-addr.arpa. 30 IN AAAA fd00:10:96::a"},
		},
		{
			name: "a reverse zone's name server answers its address", qname: "ns.dns.in-addr.arpa.", qtype: dns.TypeA,
			answer: []string{"ns.dns.in-addr.arpa. 30 IN A 10.96.0.10"},
		},
	})
	runCases(t, newResolver(t), snap, []testCase{
		{
			name: "without configured addresses the apex NS is still there, and its name is NODATA", qname: "cluster.local.", qtype: dns.TypeNS,
			answer: []string{"cluster.local. 30 IN NS ns.dns.cluster.local."},
		},
		{
			name: "without configured addresses the name server's name exists with no address", qname: "ns.dns.cluster.local.", qtype: dns.TypeA,
			ns: []string{soa},
		},
	})
}
