package resolver_test

import (
	"fmt"
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/skydns/snapshot/snapshottest"
)

func TestAddresses(t *testing.T) {
	runCases(t, newResolver(t), clusterSnapshot(t), []testCase{
		{
			name: "a service name answers its cluster IP", qname: "web.default.svc.cluster.local.", qtype: dns.TypeA,
			answer: []string{"web.default.svc.cluster.local. 30 IN A 10.96.0.1"},
		},
		{
			name: "a service name answers its IPv6 cluster IP", qname: "web.default.svc.cluster.local.", qtype: dns.TypeAAAA,
			answer: []string{"web.default.svc.cluster.local. 30 IN AAAA fd00:10:96::1"},
		},
		{
			name: "the name is matched without regard to case and echoed as asked", qname: "WEB.Default.svc.CLUSTER.local.", qtype: dns.TypeA,
			answer: []string{"WEB.Default.svc.CLUSTER.local. 30 IN A 10.96.0.1"},
		},
		{
			name: "a headless service answers every endpoint, not its port records", qname: "db.default.svc.cluster.local.", qtype: dns.TypeA,
			answer: []string{"db.default.svc.cluster.local. 30 IN A 10.244.1.5", "db.default.svc.cluster.local. 30 IN A 10.244.2.6"},
		},
		{
			name: "an endpoint hostname answers its own address", qname: "db-1.db.default.svc.cluster.local.", qtype: dns.TypeA,
			answer: []string{"db-1.db.default.svc.cluster.local. 30 IN A 10.244.2.6"},
		},
		{
			name: "a record's own ttl wins over the default", qname: "ttl.cluster.local.", qtype: dns.TypeA,
			answer: []string{"ttl.cluster.local. 5 IN A 10.0.0.2"},
		},
		{
			name: "two keys with the same address give one record", qname: "dup.cluster.local.", qtype: dns.TypeA,
			answer: []string{"dup.cluster.local. 30 IN A 10.0.0.1"},
		},
		{
			name: "a * label matches the service in every namespace", qname: "web.*.svc.cluster.local.", qtype: dns.TypeA,
			answer: []string{"web.*.svc.cluster.local. 30 IN A 10.96.0.1", "web.*.svc.cluster.local. 30 IN A 10.96.1.1"},
		},
		{
			name: "an any label matches like *", qname: "db-0.db.any.svc.cluster.local.", qtype: dns.TypeA,
			answer: []string{"db-0.db.any.svc.cluster.local. 30 IN A 10.244.1.5"},
		},
		{
			name: "a wildcard that matches nothing is NXDOMAIN", qname: "web.*.nothing.cluster.local.", qtype: dns.TypeA,
			rcode: dns.RcodeNameError, ns: []string{soa},
		},
		{
			name: "a name with nothing at or below it is NXDOMAIN", qname: "nope.default.svc.cluster.local.", qtype: dns.TypeA,
			rcode: dns.RcodeNameError, ns: []string{soa},
		},
		{
			name: "a name with records but no address is NODATA", qname: "dns-version.cluster.local.", qtype: dns.TypeA,
			ns: []string{soa},
		},
		{
			name: "an IPv4-only name is NODATA for AAAA", qname: "ttl.cluster.local.", qtype: dns.TypeAAAA,
			ns: []string{soa},
		},
		{
			name: "a name whose label holds a slash is NXDOMAIN, not another key", qname: "web/a1.default.svc.cluster.local.", qtype: dns.TypeA,
			rcode: dns.RcodeNameError, ns: []string{soa},
		},
	})
}

func TestCNAMEs(t *testing.T) {
	runCases(t, newResolver(t), clusterSnapshot(t), []testCase{
		{
			name: "a CNAME out of the zones is answered alone", qname: "ext.default.svc.cluster.local.", qtype: dns.TypeA,
			answer: []string{"ext.default.svc.cluster.local. 30 IN CNAME example.com."},
		},
		{
			name: "a CNAME into the zone is followed", qname: "alias.default.svc.cluster.local.", qtype: dns.TypeA,
			answer: []string{
				"alias.default.svc.cluster.local. 30 IN CNAME web.default.svc.cluster.local.",
				"web.default.svc.cluster.local. 30 IN A 10.96.0.1",
			},
		},
		{
			name: "a chain of CNAMEs is followed for AAAA", qname: "Alias2.default.svc.cluster.local.", qtype: dns.TypeAAAA,
			answer: []string{
				"Alias2.default.svc.cluster.local. 30 IN CNAME alias.default.svc.cluster.local.",
				"alias.default.svc.cluster.local. 30 IN CNAME web.default.svc.cluster.local.",
				"web.default.svc.cluster.local. 30 IN AAAA fd00:10:96::1",
			},
		},
		{
			name: "a chain ending out of the zones ends on the external CNAME", qname: "extalias.default.svc.cluster.local.", qtype: dns.TypeA,
			answer: []string{
				"extalias.default.svc.cluster.local. 30 IN CNAME ext.default.svc.cluster.local.",
				"ext.default.svc.cluster.local. 30 IN CNAME example.com.",
			},
		},
		{
			name: "a CNAME to a name with no records is dropped: NODATA", qname: "dangling.default.svc.cluster.local.", qtype: dns.TypeA,
			ns: []string{soa},
		},
		{
			name: "a CNAME loop gives NODATA", qname: "a.loop.cluster.local.", qtype: dns.TypeA,
			ns: []string{soa},
		},
		{
			name: "x CNAME x is skipped", qname: "self.cluster.local.", qtype: dns.TypeA,
			ns: []string{soa},
		},
		{
			name: "a CNAME to a name below the queried one is skipped", qname: "below.cluster.local.", qtype: dns.TypeA,
			ns: []string{soa},
		},
		{
			name: "a chain of eight CNAMEs is followed", qname: "c1.chain.cluster.local.", qtype: dns.TypeA,
			answer: []string{
				"c1.chain.cluster.local. 30 IN CNAME c2.chain.cluster.local.",
				"c2.chain.cluster.local. 30 IN CNAME c3.chain.cluster.local.",
				"c3.chain.cluster.local. 30 IN CNAME c4.chain.cluster.local.",
				"c4.chain.cluster.local. 30 IN CNAME c5.chain.cluster.local.",
				"c5.chain.cluster.local. 30 IN CNAME c6.chain.cluster.local.",
				"c6.chain.cluster.local. 30 IN CNAME c7.chain.cluster.local.",
				"c7.chain.cluster.local. 30 IN CNAME c8.chain.cluster.local.",
				"c8.chain.cluster.local. 30 IN CNAME c9.chain.cluster.local.",
				"c9.chain.cluster.local. 30 IN A 10.0.0.99",
			},
		},
		{
			name: "a chain of nine CNAMEs is too long: NODATA", qname: "c0.chain.cluster.local.", qtype: dns.TypeA,
			ns: []string{soa},
		},
		{
			name: "a CNAME question answers the CNAME without following it", qname: "alias.default.svc.cluster.local.", qtype: dns.TypeCNAME,
			answer: []string{"alias.default.svc.cluster.local. 30 IN CNAME web.default.svc.cluster.local."},
		},
		{
			name: "a CNAME question on an address-only name is NODATA", qname: "web.default.svc.cluster.local.", qtype: dns.TypeCNAME,
			ns: []string{soa},
		},
		{
			name: "a host name with a text is a TXT record, not a CNAME", qname: "name-and-text.mixed.cluster.local.", qtype: dns.TypeA,
			ns: []string{soa},
		},
	})
}

func TestText(t *testing.T) {
	runCases(t, newResolver(t), clusterSnapshot(t), []testCase{
		{
			name: "dns-version is a plain TXT record", qname: "dns-version.cluster.local.", qtype: dns.TypeTXT,
			answer: []string{`dns-version.cluster.local. 30 IN TXT "1.1.0"`},
		},
		{
			name: "a text longer than 255 bytes is split", qname: "long.cluster.local.", qtype: dns.TypeTXT,
			answer: []string{`long.cluster.local. 30 IN TXT "` + longText[:255] + `" "` + longText[255:] + `"`},
		},
		{
			name: "two keys with the same text give one record", qname: "dup.cluster.local.", qtype: dns.TypeTXT,
			answer: []string{`dup.cluster.local. 30 IN TXT "same"`},
		},
		{
			name: "TXT follows a CNAME into the zone", qname: "txtalias.cluster.local.", qtype: dns.TypeTXT,
			answer: []string{
				"txtalias.cluster.local. 30 IN CNAME dns-version.cluster.local.",
				`dns-version.cluster.local. 30 IN TXT "1.1.0"`,
			},
		},
		{
			name: "the text of an address record is not answered; a name's is", qname: "mixed.cluster.local.", qtype: dns.TypeTXT,
			answer: []string{`mixed.cluster.local. 30 IN TXT "kept"`},
		},
	})
}

func TestGroups(t *testing.T) {
	runCases(t, newResolver(t), clusterSnapshot(t), []testCase{
		{
			name: "records of the deciding group answer together", qname: "dom.groups.cluster.local.", qtype: dns.TypeA,
			answer: []string{"dom.groups.cluster.local. 30 IN A 127.0.0.1", "dom.groups.cluster.local. 30 IN A 127.0.0.2"},
		},
		{
			name: "records without a group always answer", qname: "dom2.groups.cluster.local.", qtype: dns.TypeA,
			answer: []string{"dom2.groups.cluster.local. 30 IN A 127.0.0.1", "dom2.groups.cluster.local. 30 IN A 127.0.0.2"},
		},
		{
			name: "the shallowest group decides and a deeper group is left out", qname: "dom1.groups.cluster.local.", qtype: dns.TypeA,
			answer: []string{"dom1.groups.cluster.local. 30 IN A 127.0.0.1"},
		},
		{
			name: "a deeper record's group answers when it is asked for directly", qname: "b.sub.dom1.groups.cluster.local.", qtype: dns.TypeA,
			answer: []string{"b.sub.dom1.groups.cluster.local. 30 IN A 127.0.0.2"},
		},
		{
			name: "shallowest groups that disagree group nothing", qname: "dom3.groups.cluster.local.", qtype: dns.TypeA,
			answer: []string{
				"dom3.groups.cluster.local. 30 IN A 127.0.0.1",
				"dom3.groups.cluster.local. 30 IN A 127.0.0.2",
				"dom3.groups.cluster.local. 30 IN A 127.0.0.3",
			},
		},
	})
}

func TestAliasFanOutIsBounded(t *testing.T) {
	// Eight levels of four names, each name aliasing all four of the next
	// level: 4^8 paths without a bound.
	records := map[string]string{}
	for level := range 8 {
		for i := range 4 {
			for j := range 4 {
				key := fmt.Sprintf("/skydns/local/cluster/fan/l%d/n%d/to%d", level, i, j)
				records[key] = fmt.Sprintf(`{"host":"n%d.l%d.fan.cluster.local."}`, j, level+1)
			}
		}
	}
	for i := range 4 {
		records[fmt.Sprintf("/skydns/local/cluster/fan/l8/n%d/a", i)] = fmt.Sprintf(`{"host":"10.0.8.%d"}`, i)
	}
	r, snap := newResolver(t), snapshottest.Build(t, "/skydns", records)
	resp := r.Resolve(snap, new(dns.Msg).SetQuestion("n0.l0.fan.cluster.local.", dns.TypeA))
	if resp.Rcode != dns.RcodeSuccess || len(resp.Answer) == 0 {
		t.Fatalf("rcode %s with %d answers, want some answers", dns.RcodeToString[resp.Rcode], len(resp.Answer))
	}
	if len(resp.Answer) > 200 {
		t.Errorf("%d answer records: following aliases was not bounded", len(resp.Answer))
	}
}
