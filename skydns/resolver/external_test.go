package resolver_test

import (
	"testing"

	"github.com/miekg/dns"
)

func TestExternalTarget(t *testing.T) {
	r, snap := newResolver(t), clusterSnapshot(t)
	tests := []struct {
		name, qname string
		qtype       uint16
		want        string // "" when nothing is pending
	}{
		{"an ExternalName service leaves its external name to resolve", "ext.default.svc.cluster.local.", dns.TypeA, "example.com."},
		{"so does a chain through it, for AAAA", "Extalias.default.svc.cluster.local.", dns.TypeAAAA, "example.com."},
		{"a chain resolved inside the zone leaves nothing", "alias.default.svc.cluster.local.", dns.TypeA, ""},
		{"an address answer leaves nothing", "web.default.svc.cluster.local.", dns.TypeA, ""},
		{"a CNAME question is complete with the CNAME", "ext.default.svc.cluster.local.", dns.TypeCNAME, ""},
		{"NXDOMAIN leaves nothing", "nope.cluster.local.", dns.TypeA, ""},
		{"a refused question leaves nothing", "example.com.", dns.TypeA, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := r.Resolve(snap, new(dns.Msg).SetQuestion(tt.qname, tt.qtype))
			got, ok := r.ExternalTarget(resp)
			if got != tt.want || ok != (tt.want != "") {
				t.Errorf("ExternalTarget = %q, %v; want %q", got, ok, tt.want)
			}
		})
	}
}

func TestExternalTargetWhenTheForwarderHasAnswered(t *testing.T) {
	r, snap := newResolver(t), clusterSnapshot(t)
	resp := r.Resolve(snap, new(dns.Msg).SetQuestion("ext.default.svc.cluster.local.", dns.TypeA))
	a, err := dns.NewRR("example.com. 60 IN A 192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Answer = append(resp.Answer, a)
	if got, ok := r.ExternalTarget(resp); ok {
		t.Errorf("ExternalTarget = %q after the target was answered, want nothing pending", got)
	}
}
