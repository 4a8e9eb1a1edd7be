package clusterset

import (
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	cs "github.com/kubesky/kubesky/contract/clusterset"
	"github.com/kubesky/kubesky/etcdstore"
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

// TestAClustersEtcdRoleWritesOnlyItsOwnKeys shows that the key layout lets
// etcd's RBAC confine a cluster to its own claim, exports and imports: the
// publisher works with such a role, and every other write is refused.
func TestAClustersEtcdRoleWritesOnlyItsOwnKeys(t *testing.T) {
	pki := etcdtest.NewPKI(t)
	etcd := etcdtest.StartSecure(t, pki, "root")
	grantClusterRole(t, etcd.Client, "east")
	east := etcdtest.NewClientWith(t, pki.Options(etcd.ClientURL(), pki.Client(t, "east")))
	p := &Publisher{cfg: Config{ClusterID: "east", Prefix: cs.DefaultPrefix, LeaseTTL: 5 * time.Second}, store: east, log: slog.New(slog.DiscardHandler)}
	held, err := p.claim(t.Context())
	if err != nil {
		t.Fatalf("claim with the cluster's role: %v", err)
	}
	own := cs.ExportKey(cs.DefaultPrefix, cs.ExportID{Cluster: "east", ServiceName: cs.ServiceName{Namespace: "shop", Name: "db"}})
	if err := p.fenced(t.Context(), held, clientv3.OpPut(own, "{}", clientv3.WithLease(held.lease))); err != nil {
		t.Fatalf("writing its own export: %v", err)
	}
	if err := p.ipsWriter(held)(t.Context(), cs.ServiceName{Namespace: "shop", Name: "db"}, []netip.Addr{netip.MustParseAddr("10.96.0.9")}); err != nil {
		t.Fatalf("writing its own import: %v", err)
	}
	if _, err := p.exportsOf(t.Context(), cs.ServiceName{Namespace: "shop", Name: "db"}); err != nil {
		t.Errorf("reading every cluster's exports: %v", err)
	}
	for _, key := range []string{"/clusterset/exports/west/shop/db", "/clusterset/clusters/west", "/clusterset/imports/west/shop/db", "/skydns/local/cluster/svc/shop/db/x"} {
		if _, err := east.Put(t.Context(), key, "{}"); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("east's Put of %s: %v, want permission denied", key, err)
		}
	}
}

// grantClusterRole creates root and a user for cluster id whose role may
// write its claim, exports and imports and read the whole clusterset prefix
// as far as its watch reaches, then turns auth on.
func grantClusterRole(t *testing.T, admin *clientv3.Client, id string) {
	t.Helper()
	ctx := t.Context()
	prefixEnd := func(p string) string { return clientv3.GetPrefixRangeEnd(p) }
	steps := []func() error{
		func() error { return userWithRole(ctx, admin, "root", "root") },
		func() error { _, err := admin.RoleAdd(ctx, "cluster-"+id); return err },
		func() error {
			_, err := admin.RoleGrantPermission(ctx, "cluster-"+id, cs.ClusterKey(cs.DefaultPrefix, id), "", clientv3.PermissionType(clientv3.PermReadWrite))
			return err
		},
		func() error {
			p := cs.ClusterExportsPrefix(cs.DefaultPrefix, id)
			_, err := admin.RoleGrantPermission(ctx, "cluster-"+id, p, prefixEnd(p), clientv3.PermissionType(clientv3.PermReadWrite))
			return err
		},
		func() error {
			p := cs.ClusterImportsPrefix(cs.DefaultPrefix, id)
			_, err := admin.RoleGrantPermission(ctx, "cluster-"+id, p, prefixEnd(p), clientv3.PermissionType(clientv3.PermReadWrite))
			return err
		},
		func() error {
			p := cs.DefaultPrefix + "/" // the import side lists and watches it all
			_, err := admin.RoleGrantPermission(ctx, "cluster-"+id, p, etcdstore.WatchedEnd(p), clientv3.PermissionType(clientv3.PermRead))
			return err
		},
		func() error { return userWithRole(ctx, admin, id, "cluster-"+id) },
		func() error { _, err := admin.AuthEnable(ctx); return err },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("etcd auth step %d: %v", i, err)
		}
	}
}

func userWithRole(ctx context.Context, admin *clientv3.Client, user, role string) error {
	if _, err := admin.UserAddWithOptions(ctx, user, "", &clientv3.UserAddOptions{NoPassword: true}); err != nil {
		return err
	}
	_, err := admin.UserGrantRole(ctx, user, role)
	return err
}
