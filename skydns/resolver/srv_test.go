package resolver_test

import (
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/skydns/resolver"
	"github.com/kubesky/kubesky/skydns/snapshot/snapshottest"
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
			name: "targetstrip shortens targets, merges equal ones (weighed once) and keeps every address as glue", qname: "strip.cluster.local.", qtype: dns.TypeSRV,
			answer: []string{
				"strip.cluster.local. 30 IN SRV 10 33 8080 strip.cluster.local.",
				"strip.cluster.local. 30 IN SRV 10 33 9 b.example.net.",
				"strip.cluster.local. 30 IN SRV 10 33 7 all.strip.cluster.local.",
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

func TestDuplicatesAnswerOnce(t *testing.T) {
	snap := snapshottest.Build(t, "/skydns", map[string]string{
		"/skydns/local/cluster/svc/default/web/a1": `{"host":"10.96.0.1"}`,
		"/skydns/local/cluster/dupsrv/a":           `{"host":"t.example.net.","port":80}`,
		"/skydns/local/cluster/dupsrv/b":           `{"host":"t.example.net","port":80}`,
		"/skydns/local/cluster/dupsrv/c":           `{"host":"u.example.net.","port":80}`,
		"/skydns/local/cluster/dupprio/a":          `{"host":"t.example.net.","port":80}`,
		"/skydns/local/cluster/dupprio/b":          `{"host":"t.example.net.","port":80,"priority":20}`,
		"/skydns/local/cluster/dupzone/a":          `{"host":"web.default.svc.cluster.local.","port":443}`,
		"/skydns/local/cluster/dupzone/b":          `{"host":"web.default.svc.cluster.local.","port":443}`,
		"/skydns/local/cluster/dupmx/a":            `{"host":"mx.example.net.","mail":true}`,
		"/skydns/local/cluster/dupmx/b":            `{"host":"mx.example.net.","mail":true}`,
		"/skydns/local/cluster/dupaddr/x/a":        `{"host":"10.0.0.1"}`,
		"/skydns/local/cluster/dupaddr/y/a":        `{"host":"10.0.0.1"}`,
		"/skydns/local/cluster/dupaddr/y/b":        `{"host":"10.0.0.2"}`,
	})
	runCases(t, newResolver(t), snap, []testCase{
		{
			name: "two keys with the same target and port give one SRV, and weights count it once", qname: "dupsrv.cluster.local.", qtype: dns.TypeSRV,
			answer: []string{
				"dupsrv.cluster.local. 30 IN SRV 10 50 80 t.example.net.",
				"dupsrv.cluster.local. 30 IN SRV 10 50 80 u.example.net.",
			},
		},
		{
			name: "the same target and port at two priorities are two SRVs", qname: "dupprio.cluster.local.", qtype: dns.TypeSRV,
			answer: []string{
				"dupprio.cluster.local. 30 IN SRV 10 100 80 t.example.net.",
				"dupprio.cluster.local. 30 IN SRV 20 100 80 t.example.net.",
			},
		},
		{
			name: "a duplicate in-zone target gives one SRV and one set of glue", qname: "dupzone.cluster.local.", qtype: dns.TypeSRV,
			answer: []string{"dupzone.cluster.local. 30 IN SRV 10 100 443 web.default.svc.cluster.local."},
			extra:  []string{"web.default.svc.cluster.local. 30 IN A 10.96.0.1"},
		},
		{
			name: "two keys with the same mail host give one MX", qname: "dupmx.cluster.local.", qtype: dns.TypeMX,
			answer: []string{"dupmx.cluster.local. 30 IN MX 10 mx.example.net."},
		},
		{
			name: "the same address in two subtrees answers once", qname: "dupaddr.cluster.local.", qtype: dns.TypeA,
			answer: []string{"dupaddr.cluster.local. 30 IN A 10.0.0.1", "dupaddr.cluster.local. 30 IN A 10.0.0.2"},
		},
	})
}

// TestSRVPriorityConfigured: a configured default priority (CoreDNS's
// kubernetes plugin answers 0) replaces 10 on records without one; a
// record's own priority stays, and weights are shared per priority alike.
func TestSRVPriorityConfigured(t *testing.T) {
	zero := uint16(0)
	r, err := resolver.New(resolver.Config{Zones: []string{"cluster.local."}, Priority: &zero})
	if err != nil {
		t.Fatal(err)
	}
	runCases(t, r, clusterSnapshot(t), []testCase{
		{
			name: "a named port", qname: "_http._tcp.web.default.svc.cluster.local.", qtype: dns.TypeSRV,
			answer: []string{"_http._tcp.web.default.svc.cluster.local. 30 IN SRV 0 100 80 web.default.svc.cluster.local."},
			extra:  []string{"web.default.svc.cluster.local. 30 IN A 10.96.0.1", "web.default.svc.cluster.local. 30 IN AAAA fd00:10:96::1"},
		},
		{
			name: "records with their own priority keep it", qname: "weights.cluster.local.", qtype: dns.TypeSRV,
			answer: []string{
				"weights.cluster.local. 30 IN SRV 0 33 1 a.example.net.",
				"weights.cluster.local. 30 IN SRV 0 16 2 b.example.net.",
				"weights.cluster.local. 30 IN SRV 0 50 3 c.example.net.",
				"weights.cluster.local. 30 IN SRV 20 100 4 d.example.net.",
				"weights.cluster.local. 30 IN SRV 30 1 5 e.example.net.",
				"weights.cluster.local. 30 IN SRV 30 99 6 f.example.net.",
			},
		},
	})
}
