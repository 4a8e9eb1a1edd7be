package clusterset

import (
	"errors"
	"log/slog"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	cs "github.com/kubesky/kubesky/contract/clusterset"
	"github.com/kubesky/kubesky/etcdstore/etcdtest"
)

// TestOnlyTheClaimsHolderWrites runs the claim and the fenced writes of two
// publishers given the same cluster ID against a real etcd.
func TestOnlyTheClaimsHolderWrites(t *testing.T) {
	etcd := etcdtest.Start(t)
	client := etcdtest.NewClient(t, etcd.ClientURL())
	cfg := Config{ClusterID: "east", Prefix: cs.DefaultPrefix, LeaseTTL: 5 * time.Second}
	first := &Publisher{cfg: cfg, store: client, log: slog.New(slog.DiscardHandler)}
	second := &Publisher{cfg: cfg, store: client, log: slog.New(slog.DiscardHandler)}
	key := cs.ExportKey(cs.DefaultPrefix, cs.ExportID{Cluster: "east", ServiceName: cs.ServiceName{Namespace: "shop", Name: "db"}})

	held, err := first.claim(t.Context())
	if err != nil {
		t.Fatalf("first claim: %v", err)
	}
	if _, err := second.claim(t.Context()); !errors.Is(err, errClaimed) {
		t.Fatalf("second claim while the first holds it: %v, want errClaimed", err)
	}
	if err := first.fenced(t.Context(), held, clientv3.OpPut(key, "v", clientv3.WithLease(held.lease))); err != nil {
		t.Fatalf("the holder's write: %v", err)
	}
	forged := &term{lease: held.lease + 1}
	if err := second.fenced(t.Context(), forged, clientv3.OpDelete(key)); err == nil {
		t.Fatal("a write fenced on another lease went through")
	}
	if _, err := client.Revoke(t.Context(), held.lease); err != nil {
		t.Fatal(err)
	}
	if resp, err := client.Get(t.Context(), key); err != nil || len(resp.Kvs) != 0 {
		t.Fatalf("the export outlived its lease: %v, %v", resp, err)
	}
	if _, err := second.claim(t.Context()); err != nil {
		t.Fatalf("claim after the lease ended: %v", err)
	}
	if err := first.fenced(t.Context(), held, clientv3.OpPut(key, "stale", clientv3.WithLease(held.lease))); err == nil {
		t.Error("the former holder wrote after losing the claim")
	}
}
