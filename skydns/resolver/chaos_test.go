package resolver_test

import (
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/skydns/resolver"
)

func TestChaosIdentity(t *testing.T) {
	r, err := resolver.New(resolver.Config{Zones: []string{"cluster.local."}, Version: "kubesky v1.2.3", Hostname: "skydns-7f9c-abcde"})
	if err != nil {
		t.Fatal(err)
	}
	runCases(t, r, clusterSnapshot(t), []testCase{
		{
			name: "version.bind. names the software", qname: "version.bind.", qtype: dns.TypeTXT, qclass: dns.ClassCHAOS,
			answer: []string{`version.bind. 0 CH TXT "kubesky v1.2.3"`},
		},
		{
			name: "hostname.bind. names the replica, owned by the name as asked", qname: "HOSTNAME.bind.", qtype: dns.TypeTXT, qclass: dns.ClassCHAOS,
			answer: []string{`HOSTNAME.bind. 0 CH TXT "skydns-7f9c-abcde"`},
		},
		{
			name: "id.server. names the replica", qname: "id.server.", qtype: dns.TypeTXT, qclass: dns.ClassCHAOS,
			answer: []string{`id.server. 0 CH TXT "skydns-7f9c-abcde"`},
		},
		{
			name: "another CH name is REFUSED", qname: "authors.bind.", qtype: dns.TypeTXT, qclass: dns.ClassCHAOS,
			rcode: dns.RcodeRefused,
		},
		{
			name: "another type of an identity name is REFUSED", qname: "version.bind.", qtype: dns.TypeA, qclass: dns.ClassCHAOS,
			rcode: dns.RcodeRefused,
		},
		{
			name: "an identity name in class IN is outside the zones: REFUSED", qname: "version.bind.", qtype: dns.TypeTXT,
			rcode: dns.RcodeRefused,
		},
		{
			name: "a zone name in class CH is REFUSED", qname: "web.default.svc.cluster.local.", qtype: dns.TypeTXT, qclass: dns.ClassCHAOS,
			rcode: dns.RcodeRefused,
		},
	})
	runCases(t, newResolver(t), clusterSnapshot(t), []testCase{
		{
			name: "without a configured version, version.bind. is REFUSED", qname: "version.bind.", qtype: dns.TypeTXT, qclass: dns.ClassCHAOS,
			rcode: dns.RcodeRefused,
		},
	})
}
