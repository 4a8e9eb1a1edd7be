package transfer_test

import (
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/skydns/snapshot"
	"github.com/kubesky/kubesky/skydns/snapshot/snapshottest"
	"github.com/kubesky/kubesky/skydns/transfer"
)

// BenchmarkRecords builds cluster.local. of 10 000 services (three records
// each, kube2sky's layout) and reports its size.
func BenchmarkRecords(b *testing.B) {
	snap, errs := snapshot.Empty("/skydns").Apply(snapshottest.Cluster("/skydns", 10000))
	if len(errs) > 0 {
		b.Fatal(errs)
	}
	res := newResolver(b, nil, nil)
	var rrs []dns.RR
	for b.Loop() {
		rrs, _ = transfer.Records(res, snap, "cluster.local.")
	}
	bytes := 0
	for _, e := range transfer.Envelopes(rrs) {
		m := new(dns.Msg).SetAxfr("cluster.local.")
		m.Answer = e.RR
		bytes += m.Len()
	}
	b.ReportMetric(float64(len(rrs)), "records")
	b.ReportMetric(float64(bytes), "wire-bytes")
}
