package resolver_test

import (
	"testing"

	"github.com/miekg/dns"
)

func TestRequestsThatAreNotAnswered(t *testing.T) {
	r, snap := newResolver(t), clusterSnapshot(t)
	question := func(name string, qtype, qclass uint16) *dns.Msg {
		m := new(dns.Msg).SetQuestion(name, qtype)
		m.Question[0].Qclass = qclass
		return m
	}
	twoQuestions := question("web.default.svc.cluster.local.", dns.TypeA, dns.ClassINET)
	twoQuestions.Question = append(twoQuestions.Question, twoQuestions.Question[0])
	update := question("cluster.local.", dns.TypeSOA, dns.ClassINET)
	update.Opcode = dns.OpcodeUpdate
	tests := []struct {
		name  string
		req   *dns.Msg
		rcode int
	}{
		{"a name outside every zone is REFUSED", question("example.com.", dns.TypeA, dns.ClassINET), dns.RcodeRefused},
		{"a name that only ends like a zone is REFUSED", question("notcluster.local.", dns.TypeA, dns.ClassINET), dns.RcodeRefused},
		{"a class other than IN is REFUSED", question("web.default.svc.cluster.local.", dns.TypeA, dns.ClassCHAOS), dns.RcodeRefused},
		{"a zone transfer is refused: the server answers those it allows", question("cluster.local.", dns.TypeAXFR, dns.ClassINET), dns.RcodeRefused},
		{"an incremental zone transfer is refused too", question("cluster.local.", dns.TypeIXFR, dns.ClassINET), dns.RcodeRefused},
		{"an UPDATE is not implemented", update, dns.RcodeNotImplemented},
		{"two questions are a format error", twoQuestions, dns.RcodeFormatError},
		{"no question is a format error", &dns.Msg{MsgHdr: dns.MsgHdr{Id: 7}}, dns.RcodeFormatError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := r.Resolve(snap, tt.req)
			if resp.Rcode != tt.rcode || resp.Id != tt.req.Id || !resp.Response {
				t.Errorf("rcode %s id %d response %v, want %s id %d response",
					dns.RcodeToString[resp.Rcode], resp.Id, resp.Response, dns.RcodeToString[tt.rcode], tt.req.Id)
			}
			if resp.Authoritative || len(resp.Answer)+len(resp.Ns)+len(resp.Extra) != 0 {
				t.Errorf("aa %v with %d records, want a bare non-authoritative reply", resp.Authoritative, len(resp.Answer)+len(resp.Ns)+len(resp.Extra))
			}
		})
	}
}

func TestResponseFlags(t *testing.T) {
	r, snap := newResolver(t), clusterSnapshot(t)
	req := new(dns.Msg).SetQuestion("web.default.svc.cluster.local.", dns.TypeA)
	req.CheckingDisabled = true
	resp := r.Resolve(snap, req)
	if !resp.Authoritative || !resp.RecursionDesired || resp.RecursionAvailable || !resp.CheckingDisabled || resp.Truncated {
		t.Errorf("flags aa=%v rd=%v ra=%v cd=%v tc=%v, want aa rd cd, not ra tc",
			resp.Authoritative, resp.RecursionDesired, resp.RecursionAvailable, resp.CheckingDisabled, resp.Truncated)
	}
	if _, err := resp.Pack(); err != nil {
		t.Errorf("the response does not pack: %v", err)
	}
}

func TestResolveDoesNotChangeTheRequest(t *testing.T) {
	r, snap := newResolver(t), clusterSnapshot(t)
	req := new(dns.Msg).SetQuestion("Web.default.svc.cluster.local.", dns.TypeSRV)
	before := req.String()
	r.Resolve(snap, req)
	if after := req.String(); after != before {
		t.Errorf("request changed:\n%s\nwant\n%s", after, before)
	}
}
