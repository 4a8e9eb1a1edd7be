package resolver_test

import (
	"testing"

	"github.com/miekg/dns"
)

func TestSRV(t *testing.T) {
	runCases(t, newResolver(t), clusterSnapshot(t), []testCase{
		{
			name: "a named port points at the service, with its addresses as glue", qname: "_http._tcp.web.default.svc.cluster.local.", qtype: dns.TypeSRV,
			answer: []string{"_http._tcp.web.default.svc.cluster.local. 30 IN SRV 10 100 80 web.default.svc.cluster.local."},
			extra:  []string{"web.default.svc.cluster.local. 30 IN A 10.96.0.1", "web.default.svc.cluster.local. 30 IN AAAA fd00:10:96::1"},
		},
		{
			name: "a headless named port points at each endpoint with equal weights", qname: "_pg._tcp.db.default.svc.cluster.local.", qtype: dns.TypeSRV,
			answer: []string{
				"_pg._tcp.db.default.svc.cluster.local. 30 IN SRV 10 50 5432 db-0.db.default.svc.cluster.local.",
				"_pg._tcp.db.default.svc.cluster.local. 30 IN SRV 10 50 5432 db-1.db.default.svc.cluster.local.",
			},
			extra: []string{"db-0.db.default.svc.cluster.local. 30 IN A 10.244.1.5", "db-1.db.default.svc.cluster.local. 30 IN A 10.244.2.6"},
		},
		{
			name: "an address record's target is named after its key", qname: "a1.web.default.svc.cluster.local.", qtype: dns.TypeSRV,
			answer: []string{"a1.web.default.svc.cluster.local. 30 IN SRV 10 100 0 a1.web.default.svc.cluster.local."},
			extra:  []string{"a1.web.default.svc.cluster.local. 30 IN A 10.96.0.1"},
		},
		{
			name: "a subtree mixes address and name records", qname: "web.default.svc.cluster.local.", qtype: dns.TypeSRV,
			answer: []string{
				"web.default.svc.cluster.local. 30 IN SRV 10 33 0 a1.web.default.svc.cluster.local.",
				"web.default.svc.cluster.local. 30 IN SRV 10 33 0 a6.web.default.svc.cluster.local.",
				"web.default.svc.cluster.local. 30 IN SRV 10 33 80 web.default.svc.cluster.local.",
			},
			extra: []string{
				"a1.web.default.svc.cluster.local. 30 IN A 10.96.0.1",
				"a6.web.default.svc.cluster.local. 30 IN AAAA fd00:10:96::1",
				"web.default.svc.cluster.local. 30 IN A 10.96.0.1",
				"web.default.svc.cluster.local. 30 IN AAAA fd00:10:96::1",
			},
		},
		{
			name: "weights are each record's share of its priority, rounded down and at least 1", qname: "weights.cluster.local.", qtype: dns.TypeSRV,
			answer: []string{
				"weights.cluster.local. 30 IN SRV 10 33 1 a.example.net.",
				"weights.cluster.local. 30 IN SRV 10 16 2 b.example.net.",
				"weights.cluster.local. 30 IN SRV 10 50 3 c.example.net.",
				"weights.cluster.local. 30 IN SRV 20 100 4 d.example.net.",
				"weights.cluster.local. 30 IN SRV 30 1 5 e.example.net.",
				"weights.cluster.local. 30 IN SRV 30 99 6 f.example.net.",
			},
		},
		{
			name: "targetstrip shortens targets, merges equal ones and keeps every address as glue", qname: "strip.cluster.local.", qtype: dns.TypeSRV,
			answer: []string{
				"strip.cluster.local. 30 IN SRV 10 25 8080 strip.cluster.local.",
				"strip.cluster.local. 30 IN SRV 10 25 9 b.example.net.",
				"strip.cluster.local. 30 IN SRV 10 25 7 all.strip.cluster.local.",
			},
			extra: []string{
				"strip.cluster.local. 30 IN A 10.0.0.7",
				"strip.cluster.local. 30 IN A 10.0.0.8",
				"all.strip.cluster.local. 30 IN A 10.0.0.9",
			},
		},
		{
			name: "a name with only text is NODATA for SRV", qname: "dns-version.cluster.local.", qtype: dns.TypeSRV,
			ns: []string{soa},
		},
		{
			name: "a missing service is NXDOMAIN for SRV", qname: "_http._tcp.nope.default.svc.cluster.local.", qtype: dns.TypeSRV,
			rcode: dns.RcodeNameError, ns: []string{soa},
		},
	})
}

func TestMX(t *testing.T) {
	runCases(t, newResolver(t), clusterSnapshot(t), []testCase{
		{
			name: "mail records answer MX with their priority as preference", qname: "mail.cluster.local.", qtype: dns.TypeMX,
			answer: []string{"mail.cluster.local. 30 IN MX 20 mx1.mail.cluster.local.", "mail.cluster.local. 30 IN MX 10 mx.example.net."},
			extra:  []string{"mx1.mail.cluster.local. 30 IN A 10.0.0.25"},
		},
		{
			name: "a name without mail records is NODATA for MX", qname: "web.default.svc.cluster.local.", qtype: dns.TypeMX,
			ns: []string{soa},
		},
		{
			name: "a mail record is not an alias", qname: "mx2.mail.cluster.local.", qtype: dns.TypeA,
			ns: []string{soa},
		},
	})
}
