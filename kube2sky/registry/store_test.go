package registry

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/kube2sky/plan"
)

func TestAStaleFenceRejectsTheTxn(t *testing.T) {
	t.Parallel()
	etcd := etcdtest.Start(t)
	rev := etcd.Put(t, "/election/k", "leader")
	s := &Store{kv: etcd.Client, timeout: 2 * time.Second, maxOps: 10, pageSize: 10}
	live := Fence{Key: "/election/k", Rev: rev}
	if err := s.Commit(t.Context(), live, []plan.Change{{Key: "/a", Value: []byte("1")}}); err != nil {
		t.Fatalf("commit with a live fence: %v", err)
	}
	etcd.Delete(t, "/election/k")
	etcd.Put(t, "/election/k", "someone else")
	err := s.Commit(t.Context(), live, []plan.Change{{Key: "/b", Value: []byte("1")}})
	if !errors.Is(err, ErrNotLeader) {
		t.Fatalf("commit with a stale fence: %v, want ErrNotLeader", err)
	}
	if resp, _ := etcd.Client.Get(context.Background(), "/b"); len(resp.Kvs) != 0 {
		t.Error("the fenced-off write landed")
	}
}

func TestAKeyChangedSinceItWasReadIsAConflict(t *testing.T) {
	t.Parallel()
	etcd := etcdtest.Start(t)
	etcd.Put(t, "/a", "1")
	s := &Store{kv: etcd.Client, timeout: 2 * time.Second, maxOps: 10, pageSize: 10}
	cur, err := s.Read(t.Context(), "/a", nil)
	if err != nil {
		t.Fatal(err)
	}
	etcd.Put(t, "/a", "2")
	err = s.Commit(t.Context(), Fence{}, []plan.Change{{Key: "/a", ModRev: cur["/a"].ModRev}})
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("delete of a changed key: %v, want ErrConflict", err)
	}
	err = s.Commit(t.Context(), Fence{}, []plan.Change{{Key: "/new", Value: []byte("x")}, {Key: "/a", Value: []byte("3"), ModRev: cur["/a"].ModRev}})
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("put over a changed key: %v, want ErrConflict", err)
	}
	if resp, _ := etcd.Client.Get(context.Background(), "/new"); len(resp.Kvs) != 0 {
		t.Error("a Txn with a failed condition wrote part of its batch")
	}
}
