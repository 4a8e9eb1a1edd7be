package relay_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kubesky/kubesky/etcdstore"
	"github.com/kubesky/kubesky/etcdstore/etcdtest"
)

// TestTheRelayServesTheClustersetPrefixOnceItsUserMayReadIt: the relay
// limits no key range itself, so skydns reads the Multi-Cluster Services
// records (--clusterset-prefix) through it exactly when the relay's etcd
// user may read them (the chart's auth Job grants it with
// clusterset.enabled and no broker), with either Watch the relay serves.
func TestTheRelayServesTheClustersetPrefixOnceItsUserMayReadIt(t *testing.T) {
	for _, batch := range []time.Duration{0, 250 * time.Millisecond} {
		t.Run(fmt.Sprintf("watch batch %s", batch), func(t *testing.T) {
			s := newSetup(t)
			s.watchBatch = batch
			s.etcd.Put(t, "/clusterset/clusters/east", `{"cluster":"east"}`)
			c := s.client(t, s.startRelay(t, "relay", "reader"), "reader")
			if _, err := c.Get(t.Context(), "/clusterset/", clientv3.WithPrefix()); !errors.Is(err, rpctypes.ErrPermissionDenied) {
				t.Fatalf("before the grant: %v, want etcd's permission denied", err)
			}
			grantRead(t, s, "relay", "/clusterset/")
			requireClustersetRead(t, s, c)
		})
	}
}

// grantRead lets role read every key under prefix, as far as a watch of
// it reaches.
func grantRead(t *testing.T, s setup, role, prefix string) {
	t.Helper()
	for _, p := range etcdstore.PrefixPermissions(prefix, clientv3.PermissionType(clientv3.PermRead)) {
		must(t, func() error {
			_, err := s.etcd.Client.RoleGrantPermission(t.Context(), role, p.Key, p.End, p.Type)
			return err
		})
	}
}

// requireClustersetRead lists /clusterset/ through c as skydns does, then
// watches it from the next revision and sees a put.
func requireClustersetRead(t *testing.T, s setup, c *clientv3.Client) {
	t.Helper()
	var keys []string
	header, err := etcdstore.Scan(t.Context(), c, "/clusterset/", 10, 5*time.Second, func(kv *mvccpb.KeyValue) { keys = append(keys, string(kv.Key)) })
	if err != nil || len(keys) != 1 || keys[0] != "/clusterset/clusters/east" {
		t.Fatalf("listed %v, %v; want /clusterset/clusters/east", keys, err)
	}
	w := c.Watch(t.Context(), "/clusterset/", clientv3.WithPrefix(), clientv3.WithCreatedNotify(), clientv3.WithRev(header.Revision+1))
	if resp := <-w; !resp.Created || resp.Err() != nil {
		t.Fatalf("watch not created: %+v", resp)
	}
	s.etcd.Put(t, "/clusterset/exports/east/default/web", `{}`)
	select {
	case resp := <-w:
		if len(resp.Events) != 1 || string(resp.Events[0].Kv.Key) != "/clusterset/exports/east/default/web" {
			t.Errorf("watch saw %+v", resp)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the watch saw no change")
	}
	if _, err := c.Put(t.Context(), "/clusterset/exports/east/default/web", "x"); !errors.Is(err, rpctypes.ErrPermissionDenied) {
		t.Errorf("a write through the relay: %v, want permission denied", err)
	}
	if err := etcdtest.WatchRangesErr(t.Context(), c, "/clusterset/"); err != nil {
		t.Error(err)
	}
}
