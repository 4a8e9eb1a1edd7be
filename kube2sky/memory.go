package kube2sky

import (
	"runtime/debug"
	"sync"

	"k8s.io/client-go/rest"
)

// DefaultGCPercent is --gc-percent's default: a heap half again as big as
// what is live (bench/results/kube2sky.md has the measurements).
const DefaultGCPercent = 50

// setGCPercent applies --gc-percent to the process; -1 leaves GOGC's
// setting.
func setGCPercent(n int) {
	if n >= 0 {
		debug.SetGCPercent(n)
	}
}

// fullReconcileGC is how many full reconciles run under tightGC, and the
// target to go back to when the last ends (tests run several controllers
// in one process).
var fullReconcileGC struct {
	sync.Mutex
	running, restore int
}

// tightGC halves the GC target (--gc-percent n, at least 10) until the
// returned function is called, and is called around a full reconcile. A
// full reconcile makes garbage fast (every group's records built and
// encoded, etcd's listing, the Txns) while it holds only one chunk of
// records: the peak is the caches plus the collector's headroom over
// them, and a smaller target keeps that headroom small for a few seconds
// of extra collections. n = -1 (GOGC's setting) is left alone.
func tightGC(n int) (restore func()) {
	if n < 0 {
		return func() {}
	}
	g := &fullReconcileGC
	g.Lock()
	defer g.Unlock()
	if g.running == 0 {
		g.restore = debug.SetGCPercent(max(n/2, 10))
	}
	g.running++
	return func() {
		g.Lock()
		defer g.Unlock()
		if g.running--; g.running == 0 {
			debug.SetGCPercent(g.restore)
		}
	}
}

// freeReconcileGarbage collects what a full reconcile left behind (every
// Service's desired records, the etcd listing, the Txns) and returns the
// memory to the OS. A full reconcile holds several times what kube2sky
// keeps between them, and the Go heap would otherwise keep room for it
// until the runtime's scavenger gets round to it; this costs one GC per
// full reconcile, outside the reconcile's lock.
func freeReconcileGarbage() { debug.FreeOSMemory() }

// withProtobuf returns a copy of cfg that asks the API server for
// protobuf (every type kube2sky watches is built in), falling back to JSON.
// A list of 150,000 Pods is about half the bytes in protobuf, and decoding
// it allocates far less than decoding JSON.
func withProtobuf(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.ContentType = "application/vnd.kubernetes.protobuf"
	c.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	return c
}
