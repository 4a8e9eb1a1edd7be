package resolver_test

import (
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/skydns/snapshot"
)

func TestMalformedValuesAreSkipped(t *testing.T) {
	snap, errs := snapshot.Empty("/skydns").Apply(contract.Update{Revision: 7, Full: true, Events: []contract.Event{
		{Type: contract.Put, Key: "/skydns/local/cluster/svc/default/web/a1", Value: []byte(`{"host":"10.96.0.1"}`)},
		{Type: contract.Put, Key: "/skydns/local/cluster/svc/default/web/a2", Value: []byte(`{"host":"10.96.0.2"`)},
		{Type: contract.Put, Key: "/skydns/local/cluster/svc/default/web/a3", Value: []byte(`{"port":99999,"host":"10.96.0.3"}`)},
		{Type: contract.Put, Key: "/skydns/local/cluster/svc/default/bad/a1", Value: []byte(`[]`)},
	}})
	if len(errs) != 3 {
		t.Fatalf("Apply reported %d errors (%v), want 3", len(errs), errs)
	}
	const soa7 = "cluster.local. 30 IN SOA ns.dns.cluster.local. hostmaster.cluster.local. 7 7200 1800 86400 30"
	runCases(t, newResolver(t), snap, []testCase{
		{
			name: "the good records of a name still answer", qname: "web.default.svc.cluster.local.", qtype: dns.TypeA,
			answer: []string{"web.default.svc.cluster.local. 30 IN A 10.96.0.1"},
		},
		{
			name: "a name whose only value is malformed does not exist", qname: "bad.default.svc.cluster.local.", qtype: dns.TypeA,
			rcode: dns.RcodeNameError, ns: []string{soa7},
		},
	})
}
