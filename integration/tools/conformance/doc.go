// Package conformance builds Kubernetes' own end-to-end suite, limited to the
// sig-network tests (the DNS conformance tests among them), from the
// k8s.io/kubernetes module pinned in this module's go.mod. `go test -c`
// turns it into the e2e binary that `make conformance` runs against the
// cluster `make cluster` starts; see docs/cluster.md.
package conformance
