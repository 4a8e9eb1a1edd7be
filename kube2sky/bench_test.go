package kube2sky

import (
	"fmt"
	"testing"

	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
)

// benchObjects returns 10k Services with 50k endpoints: 8k with a cluster IP
// and two named ports, each with an EndpointSlice of 5 endpoints (which
// make no records), and 2k headless ones with 5 ready endpoints each.
func benchObjects() []any {
	var objs []any
	for i := range 10000 {
		name := fmt.Sprintf("svc-%d", i)
		ports := []corev1.ServicePort{tcp("http", 80), {Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53}}
		if i%5 == 4 {
			objs = append(objs, headless("bench", name, ports...))
		} else {
			objs = append(objs, service("bench", name, []string{fmt.Sprintf("10.96.%d.%d", i/256, i%256)}, ports...))
		}
		var eps []ep
		for j := range 5 {
			eps = append(eps, ep{fmt.Sprintf("10.%d.%d.%d", 100+j, i/256, i%256), "", true})
		}
		objs = append(objs, endpointSlice("bench", name, name+"-x", slicePort("http", 8080), eps...))
	}
	return objs
}

// BenchmarkSync10kServices measures, against an embedded etcd, the initial
// sync of 10k Services with 50k endpoints (time and Txns) and a
// steady-state resync of the same (which must write nothing).
func BenchmarkSync10kServices(b *testing.B) {
	h := newHarness(b, benchObjects()...)
	r := h.start("bench", func(c *Config) { c.LeaderElect = false })
	h.waitReady(r)
	b.Run("initial", func(b *testing.B) {
		var txn, written float64
		for b.Loop() {
			b.StopTimer()
			wipe(b, h.etcd)
			t0, w0 := txns(r), value(r.metrics.recordsWritten)
			b.StartTimer()
			if err := r.resyncNow(b); err != nil {
				b.Fatal(err)
			}
			txn, written = txns(r)-t0, value(r.metrics.recordsWritten)-w0
		}
		b.ReportMetric(txn, "txns/op")
		b.ReportMetric(written, "records/op")
	})
	b.Run("steady-resync", func(b *testing.B) {
		t0, w0, d0 := txns(r), value(r.metrics.recordsWritten), value(r.metrics.recordsDeleted)
		for b.Loop() {
			if err := r.resyncNow(b); err != nil {
				b.Fatal(err)
			}
		}
		writes := txns(r) - t0 + value(r.metrics.recordsWritten) - w0 + value(r.metrics.recordsDeleted) - d0
		b.ReportMetric(writes/float64(b.N), "writes/op")
		if writes != 0 {
			b.Errorf("a steady-state resync wrote %v times", writes)
		}
	})
}

func wipe(b *testing.B, s *etcdtest.Server) {
	for _, prefix := range []string{"/skydns/local/", "/skydns/arpa/"} {
		if _, err := s.Client.Delete(b.Context(), prefix, clientv3.WithPrefix()); err != nil {
			b.Fatal(err)
		}
	}
}
