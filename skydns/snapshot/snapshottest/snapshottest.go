// Package snapshottest builds snapshots for tests and benchmarks: records
// written as a map of etcd keys to JSON, and synthetic clusters laid out the
// way kube2sky writes them.
package snapshottest

import (
	"fmt"
	"net/netip"
	"sort"
	"testing"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/skydns/snapshot"
)

// Build returns a snapshot of prefix holding records (etcd key → JSON
// value) at revision 1. It fails the test if a value does not decode.
func Build(tb testing.TB, prefix string, records map[string]string) *snapshot.Snapshot {
	tb.Helper()
	snap, errs := snapshot.Empty(prefix).Apply(Update(1, records))
	for _, err := range errs {
		tb.Errorf("building snapshot: %v", err)
	}
	return snap
}

// Update returns a Full update holding records, in key order.
func Update(revision int64, records map[string]string) contract.Update {
	keys := make([]string, 0, len(records))
	for k := range records {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	u := contract.Update{Revision: revision, Full: true}
	for _, k := range keys {
		u.Events = append(u.Events, contract.Event{Type: contract.Put, Key: k, Value: []byte(records[k])})
	}
	return u
}

// Cluster returns a Full update with n ClusterIP services in zone
// cluster.local under prefix, spread over ten namespaces. Service i is
// svc-<i>.ns-<i%10>, with a cluster IP, one named port (_http._tcp, 80) and
// a PTR record: three records per service.
func Cluster(prefix string, n int) contract.Update {
	u := contract.Update{Revision: 1, Full: true, Events: make([]contract.Event, 0, 3*n)}
	base := netip.MustParseAddr("10.96.0.0").As4()
	for i := range n {
		ip := netip.AddrFrom4([4]byte{base[0], base[1], byte(i >> 8), byte(i)})
		u.Events = append(u.Events, ServiceEvents(prefix, i, ip)...)
	}
	return u
}

// ServiceEvents returns the three Put events of service i of Cluster.
func ServiceEvents(prefix string, i int, ip netip.Addr) []contract.Event {
	name := ServiceName(i)
	key := contract.Key(prefix, name)
	put := func(k, v string) contract.Event {
		return contract.Event{Type: contract.Put, Key: k, Value: []byte(v)}
	}
	return []contract.Event{
		put(key+"/c0ffee", fmt.Sprintf(`{"host":%q,"owner":"kube2sky"}`, ip)),
		put(key+"/_tcp/_http/c0ffee", fmt.Sprintf(`{"host":%q,"port":80,"owner":"kube2sky"}`, name)),
		put(contract.ReverseKey(prefix, ip), fmt.Sprintf(`{"host":%q,"owner":"kube2sky"}`, name)),
	}
}

// ServiceName is the FQDN of service i of Cluster.
func ServiceName(i int) string {
	return fmt.Sprintf("svc-%d.ns-%d.svc.cluster.local.", i, i%10)
}
