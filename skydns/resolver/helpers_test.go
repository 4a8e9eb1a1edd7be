package resolver_test

import (
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/internal/dnstest"
	"github.com/kubesky/kubesky/skydns/resolver"
	"github.com/kubesky/kubesky/skydns/snapshot"
)

// testCase is one question and the expected response. Records are written
// as zone-file text; sections are compared after sorting.
type testCase struct {
	name   string // a sentence saying what is being shown
	qname  string
	qtype  uint16
	qclass uint16 // 0: IN
	rcode  int
	answer []string
	ns     []string
	extra  []string
}

// soa is the SOA of cluster.local. in a snapshot at revision 1.
const soa = "cluster.local. 30 IN SOA ns.dns.cluster.local. hostmaster.cluster.local. 1 7200 1800 86400 30"

func newResolver(t testing.TB) *resolver.Resolver {
	t.Helper()
	r, err := resolver.New(resolver.Config{Zones: []string{"cluster.local."}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func runCases(t *testing.T, r *resolver.Resolver, snap *snapshot.Snapshot, cases []testCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := new(dns.Msg).SetQuestion(tc.qname, tc.qtype)
			req.Id = 4242
			if tc.qclass != 0 {
				req.Question[0].Qclass = tc.qclass
			}
			resp := r.Resolve(snap, req)
			checkResponse(t, req, resp, tc)
		})
	}
}

func checkResponse(t *testing.T, req, resp *dns.Msg, tc testCase) {
	t.Helper()
	if resp.Id != req.Id || !resp.Response {
		t.Errorf("id %d response %v, want id %d and a response", resp.Id, resp.Response, req.Id)
	}
	if resp.Rcode != tc.rcode {
		t.Errorf("rcode %s, want %s", dns.RcodeToString[resp.Rcode], dns.RcodeToString[tc.rcode])
	}
	if len(resp.Question) != 1 || resp.Question[0] != req.Question[0] {
		t.Errorf("question %v, want %v echoed as asked", resp.Question, req.Question)
	}
	dnstest.CheckRecords(t, "answer section", resp.Answer, tc.answer)
	dnstest.CheckRecords(t, "authority section", resp.Ns, tc.ns)
	dnstest.CheckRecords(t, "additional section", resp.Extra, tc.extra)
	if t.Failed() {
		t.Logf("response:\n%v", resp)
	}
}
