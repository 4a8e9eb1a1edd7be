package resolver_test

import (
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/skydns/snapshot"
	"github.com/kubesky/kubesky/skydns/snapshot/snapshottest"
)

// BenchmarkResolve answers A, SRV, PTR and NXDOMAIN questions from a
// snapshot of 10k ClusterIP services (30k records).
func BenchmarkResolve(b *testing.B) {
	snap, errs := snapshot.Empty("/skydns").Apply(snapshottest.Cluster("/skydns", 10_000))
	if len(errs) != 0 {
		b.Fatal(errs)
	}
	r := newResolver(b)
	name := snapshottest.ServiceName(1234)
	for _, bc := range []struct {
		name   string
		qname  string
		qtype  uint16
		rcode  int
		answer int
	}{
		{"A", name, dns.TypeA, dns.RcodeSuccess, 1},
		{"SRV", "_http._tcp." + name, dns.TypeSRV, dns.RcodeSuccess, 1},
		{"PTR", "210.4.96.10.in-addr.arpa.", dns.TypePTR, dns.RcodeSuccess, 1},
		{"NXDOMAIN", "nope.ns-4.svc.cluster.local.", dns.TypeA, dns.RcodeNameError, 0},
	} {
		b.Run(bc.name, func(b *testing.B) {
			req := new(dns.Msg).SetQuestion(bc.qname, bc.qtype)
			b.ReportAllocs()
			for b.Loop() {
				resp := r.Resolve(snap, req)
				if resp.Rcode != bc.rcode || len(resp.Answer) != bc.answer {
					b.Fatalf("rcode %d with %d answers, want %d with %d", resp.Rcode, len(resp.Answer), bc.rcode, bc.answer)
				}
			}
		})
	}
}
