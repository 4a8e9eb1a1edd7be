package kube2sky

import (
	"runtime/debug"

	"k8s.io/client-go/rest"
)

// DefaultGCPercent is --gc-percent's default: a heap half again as big as
// what is live (docs/bench-kube2sky.md has the measurements).
const DefaultGCPercent = 50

// setGCPercent applies --gc-percent to the process; -1 leaves GOGC's
// setting.
func setGCPercent(n int) {
	if n >= 0 {
		debug.SetGCPercent(n)
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
