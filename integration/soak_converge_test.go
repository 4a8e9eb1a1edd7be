package integration

import (
	"context"
	"fmt"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/integration/soakcheck"
	"github.com/kubesky/kubesky/kube2sky/records"
)

// soakZone is kube2sky's default zone, prefix, TTL and owner, which the
// soak's kube2sky replicas run with.
var soakZone = records.NewZone("cluster.local", "/skydns", 30, "kube2sky.cluster.local")

// converged returns nil when etcd holds exactly the records kube2sky's
// builder makes of the API server's objects, every skydns has applied
// etcd's last revision of the prefix, and every skydns answers every pool
// name with its final value.
func (r *soakRun) converged(ctx context.Context, final map[string]string) error {
	want, err := r.desiredRecords(ctx)
	if err != nil {
		return err
	}
	got, err := r.ownedRecords(ctx)
	if err != nil {
		return err
	}
	if err := soakcheck.DiffError(want, got); err != nil {
		return fmt.Errorf("etcd against the API objects: %w", err)
	}
	last, err := r.history.sync(ctx, convergeBound)
	if err != nil {
		return err
	}
	for _, s := range r.skydns {
		if err := servesExactly(s.DNSAddr, final); err != nil {
			return err
		}
		m, err := s.Metrics()
		if err != nil {
			return err
		}
		if rev, want := int64(m["skydns_snapshot_revision"]), r.lastPrefixRevision(last); rev < want {
			return fmt.Errorf("%s serves revision %d, etcd's prefix is at %d", s.DNSAddr, rev, want)
		}
	}
	return nil
}

// lastPrefixRevision returns the last revision up to upTo that touched the
// prefix.
func (r *soakRun) lastPrefixRevision(upTo int64) int64 {
	h, _ := r.history.history()
	return min(h.Last(), upTo)
}

// servesExactly asks addr for every name and compares with its value.
func servesExactly(addr string, final map[string]string) error {
	for name, value := range final {
		got, err := askA(addr, name, lookupTimeout)
		if err != nil {
			return fmt.Errorf("%s, %s: %w", addr, name, err)
		}
		if got != value {
			return fmt.Errorf("%s answers %s with %s, want %s", addr, name, got, value)
		}
	}
	return nil
}

// desiredRecords builds, with kube2sky's own builder, the records of every
// Service and EndpointSlice the API server holds, plus the zone's own.
func (r *soakRun) desiredRecords(ctx context.Context) (map[string]string, error) {
	svcs, err := r.api.Client.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	slices, err := r.api.Client.DiscoveryV1().EndpointSlices("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	byNamespace := map[string][]records.EndpointSlice{}
	for i := range slices.Items {
		s := &slices.Items[i]
		byNamespace[s.Namespace] = append(byNamespace[s.Namespace], records.EndpointSliceFrom(s))
	}
	want := map[string]string{}
	add := func(e records.Entry) { want[e.Key] = string(e.Record.Encode()) }
	add(soakZone.DNSVersion())
	for i := range svcs.Items {
		svc := &svcs.Items[i]
		entries, _ := records.Build(soakZone, records.ServiceFrom(svc), byNamespace[svc.Namespace])
		for _, e := range entries {
			add(e)
		}
	}
	return want, nil
}

// ownedRecords reads every record kube2sky owns from etcd (the zone's and
// the reverse zones'; its election key is not a record).
func (r *soakRun) ownedRecords(ctx context.Context) (map[string]string, error) {
	resp, err := r.cluster.Client().Get(ctx, soakZone.Prefix()+"/", clientv3.WithPrefix())
	if err != nil {
		return nil, err
	}
	got := map[string]string{}
	for _, kv := range resp.Kvs {
		key := string(kv.Key)
		if !strings.HasPrefix(key, soakZone.ZoneKeyPrefix()) && !strings.HasPrefix(key, soakZone.ReverseKeyPrefix()) {
			continue
		}
		rec, err := contract.Decode(key, kv.Value)
		if err != nil || rec.Owner != soakZone.Owner() {
			continue
		}
		got[key] = string(rec.Encode())
	}
	return got, nil
}
