package resolver_test

import (
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/skydns/snapshot/snapshottest"
)

// TestOneOwnerDataOrOneCNAME shows RFC 2181 §10.1 at work: a name holds
// its data or one CNAME, never both, and never two CNAMEs.
func TestOneOwnerDataOrOneCNAME(t *testing.T) {
	snap := snapshottest.Build(t, "/skydns", map[string]string{
		// A namespace holding a ClusterIP service and an ExternalName one.
		"/skydns/local/cluster/svc/shop/web/a1": `{"host":"10.96.5.1"}`,
		"/skydns/local/cluster/svc/shop/ext/x1": `{"host":"example.com."}`,
		// A key holding an IP next to a key holding a name.
		"/skydns/local/cluster/mixed/a": `{"host":"10.0.0.4"}`,
		"/skydns/local/cluster/mixed/b": `{"host":"example.com."}`,
		// Only names: two external, or a dangling one before a live one.
		"/skydns/local/cluster/twoext/a": `{"host":"example.com."}`,
		"/skydns/local/cluster/twoext/b": `{"host":"example.org."}`,
		"/skydns/local/cluster/pick/a":   `{"host":"nothing.cluster.local."}`,
		"/skydns/local/cluster/pick/b":   `{"host":"web.shop.svc.cluster.local."}`,
		// A text next to a name.
		"/skydns/local/cluster/textalias/t": `{"text":"hello"}`,
		"/skydns/local/cluster/textalias/x": `{"host":"example.com."}`,
	})
	runCases(t, newResolver(t), snap, []testCase{
		{
			name: "a namespace answers its services' addresses and no ExternalName CNAME", qname: "shop.svc.cluster.local.", qtype: dns.TypeA,
			answer: []string{"shop.svc.cluster.local. 30 IN A 10.96.5.1"},
		},
		{
			name: "the ExternalName service itself is its CNAME", qname: "ext.shop.svc.cluster.local.", qtype: dns.TypeA,
			answer: []string{"ext.shop.svc.cluster.local. 30 IN CNAME example.com."},
		},
		{
			name: "an address next to a name answers the address alone", qname: "mixed.cluster.local.", qtype: dns.TypeA,
			answer: []string{"mixed.cluster.local. 30 IN A 10.0.0.4"},
		},
		{
			name: "a name holding an address has no CNAME for AAAA either: NODATA", qname: "mixed.cluster.local.", qtype: dns.TypeAAAA,
			ns: []string{soa},
		},
		{
			name: "a name holding an address has no CNAME", qname: "mixed.cluster.local.", qtype: dns.TypeCNAME,
			ns: []string{soa},
		},
		{
			name: "two names answer one CNAME, the first in key order", qname: "twoext.cluster.local.", qtype: dns.TypeA,
			answer: []string{"twoext.cluster.local. 30 IN CNAME example.com."},
		},
		{
			name: "a dangling in-zone CNAME gives way to the next name that answers", qname: "pick.cluster.local.", qtype: dns.TypeA,
			answer: []string{"pick.cluster.local. 30 IN CNAME web.shop.svc.cluster.local.", "web.shop.svc.cluster.local. 30 IN A 10.96.5.1"},
		},
		{
			name: "a text next to a name is data: TXT answers the text", qname: "textalias.cluster.local.", qtype: dns.TypeTXT,
			answer: []string{`textalias.cluster.local. 30 IN TXT "hello"`},
		},
		{
			name: "a text next to a name is data: A is NODATA, not a CNAME", qname: "textalias.cluster.local.", qtype: dns.TypeA,
			ns: []string{soa},
		},
	})
}
