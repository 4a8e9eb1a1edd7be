package snapshot_test

import (
	"fmt"
	"net/netip"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/skydns/snapshot"
	"github.com/kubesky/kubesky/skydns/snapshot/snapshottest"
)

// BenchmarkApply applies one watch event (a service's cluster IP changes)
// to a snapshot of 10k services (30k records).
func BenchmarkApply(b *testing.B) {
	base, errs := snapshot.Empty(prefix).Apply(snapshottest.Cluster(prefix, 10_000))
	if len(errs) != 0 {
		b.Fatal(errs)
	}
	key := contract.Key(prefix, snapshottest.ServiceName(1234)) + "/c0ffee"
	events := [2]contract.Update{
		{Revision: 2, Events: []contract.Event{put(key, `{"host":"10.99.0.1"}`)}},
		{Revision: 3, Events: []contract.Event{put(key, `{"host":"10.99.0.2"}`)}},
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		next, _ := base.Apply(events[i%2])
		if next.Len() != base.Len() {
			b.Fatalf("Len %d, want %d", next.Len(), base.Len())
		}
	}
}

// BenchmarkLookup looks up one service name in a 10k-service snapshot.
func BenchmarkLookup(b *testing.B) {
	snap, _ := snapshot.Empty(prefix).Apply(snapshottest.Cluster(prefix, 10_000))
	name := snapshottest.ServiceName(1234)
	buf := make([]snapshot.Entry, 0, 8)
	b.ReportAllocs()
	for b.Loop() {
		if got := snap.AppendLookup(buf[:0], name); len(got) != 2 {
			b.Fatalf("found %d entries, want 2", len(got))
		}
	}
}

// BenchmarkMemory reports the heap a snapshot holds, for 10k and 100k
// records (one A record per service here, so records = services).
func BenchmarkMemory(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) { reportHeld(b, addressRecords(n)) })
	}
}

// BenchmarkMemoryHeadlessZone reports the heap a snapshot holds for the
// zone of make bench-node-local-memory: n headless Services of 5 endpoints,
// each endpoint an A, an SRV and a PTR record as kube2sky writes them.
func BenchmarkMemoryHeadlessZone(b *testing.B) {
	for _, n := range []int{10_000, 50_000} {
		b.Run(fmt.Sprintf("services=%d", n), func(b *testing.B) { reportHeld(b, headlessZone(n)) })
	}
}

// reportHeld reports the heap the snapshot of full update u holds, in all
// and per record.
func reportHeld(b *testing.B, u contract.Update) {
	var bytes uint64
	for b.Loop() {
		bytes = heapOf(func() any { s, _ := snapshot.Empty(prefix).Apply(u); return s })
	}
	b.ReportMetric(float64(bytes), "bytes")
	b.ReportMetric(float64(bytes)/float64(len(u.Events)), "bytes/record")
}

// headlessZone is a full update of n headless Services' records, in etcd's
// key order as a list brings them.
func headlessZone(n int) contract.Update {
	u := contract.Update{Revision: 1, Full: true}
	for i := range n {
		svc := fmt.Sprintf("big-%d", i)
		for j := range 5 {
			ip := fmt.Sprintf("10.%d.%d.%d", 100+j, i/250%256, i%250+1)
			dashed := strings.ReplaceAll(ip, ".", "-")
			target := fmt.Sprintf(`{"host":"%s.%s.default.svc.cluster.local.","port":80,"ttl":30,"owner":"kube2sky.cluster.local"}`, dashed, svc)
			u.Events = append(u.Events,
				put(fmt.Sprintf("%s/local/cluster/svc/default/%s/%s", prefix, svc, dashed), fmt.Sprintf(`{"host":%q,"ttl":30,"owner":"kube2sky.cluster.local"}`, ip)),
				put(fmt.Sprintf("%s/local/cluster/svc/default/%s/_tcp/_http/%s", prefix, svc, dashed), target),
				put(fmt.Sprintf("%s/arpa/in-addr/%s", prefix, strings.ReplaceAll(ip, ".", "/")), strings.Replace(target, `"port":80,`, "", 1)))
		}
	}
	slices.SortFunc(u.Events, func(a, b contract.Event) int { return strings.Compare(a.Key, b.Key) })
	return u
}

// addressRecords is a full update of n A records, kube2sky style.
func addressRecords(n int) contract.Update {
	u := contract.Update{Revision: 1, Full: true}
	for i := range n {
		ip := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		key := contract.Key(prefix, snapshottest.ServiceName(i)) + "/c0ffee"
		u.Events = append(u.Events, put(key, fmt.Sprintf(`{"host":%q,"owner":"kube2sky"}`, ip)))
	}
	return u
}

// heapOf returns the live heap the value built by build keeps.
func heapOf(build func() any) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v := build()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(v)
	return after.HeapAlloc - before.HeapAlloc
}
