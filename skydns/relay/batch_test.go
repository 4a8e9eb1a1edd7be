package relay_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/etcdstore"
	"github.com/kubesky/kubesky/internal/polltest"
)

// revisionsSeen reads w until it has delivered revision last and returns
// the mod revisions of its events and how many responses carried them.
func revisionsSeen(t *testing.T, w clientv3.WatchChan, last int64) ([]int64, int) {
	t.Helper()
	var revs []int64
	responses := 0
	timeout := time.After(30 * time.Second)
	for len(revs) == 0 || revs[len(revs)-1] < last {
		select {
		case resp, ok := <-w:
			if !ok || resp.Err() != nil {
				t.Fatalf("watch ended after %v: %v", revs, resp.Err())
			}
			if len(resp.Events) > 0 {
				responses++
			}
			for _, ev := range resp.Events {
				revs = append(revs, ev.Kv.ModRevision)
			}
		case <-timeout:
			t.Fatalf("saw %v, not yet %d", revs, last)
		}
	}
	return revs, responses
}

func TestBatchedWatchesDeliverEveryRevisionInOrderInFewerResponses(t *testing.T) {
	s := newSetup(t)
	s.watchBatch = time.Second
	url := s.startRelay(t, "relay", "reader")
	c := s.client(t, url, "reader")
	resp, err := c.Get(t.Context(), "/skydns/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	start := resp.Header.Revision
	watch := func(from int64) clientv3.WatchChan {
		w := s.client(t, url, "reader").Watch(t.Context(), "/skydns/", clientv3.WithPrefix(), clientv3.WithCreatedNotify(), clientv3.WithRev(from))
		if created := <-w; !created.Created {
			t.Fatalf("from %d: first response %+v", from, created)
		}
		return w
	}
	first, second := watch(start+1), watch(start+1)
	const changes = 20
	var last int64
	for i := range changes {
		last = s.etcd.Put(t, fmt.Sprintf("/skydns/local/cluster/svc/default/s%d/x", i%5), fmt.Sprint(i))
	}
	for _, tc := range []struct {
		name string
		w    clientv3.WatchChan
		from int64
	}{
		{"first", first, start + 1},
		{"second", second, start + 1},
		{"joining later, from a revision inside a kept batch", watch(start + 5), start + 5},
		{"from before the shared watch began (a watch of its own)", watch(start - 2), start - 2},
	} {
		revs, responses := revisionsSeen(t, tc.w, last)
		direct := s.etcd.Client.Watch(t.Context(), "/skydns/", clientv3.WithPrefix(), clientv3.WithRev(tc.from))
		if want, _ := revisionsSeen(t, direct, last); fmt.Sprint(revs) != fmt.Sprint(want) {
			t.Errorf("%s: revisions %v, etcd's own watch %v", tc.name, revs, want)
		}
		if responses > changes/2 {
			t.Errorf("%s: %d responses for %d revisions, want them batched", tc.name, responses, changes)
		}
	}
}

func TestABatchedWatchFromACompactedRevisionIsToldSo(t *testing.T) {
	s := newSetup(t)
	s.watchBatch = 100 * time.Millisecond
	url := s.startRelay(t, "relay", "reader")
	old := s.etcd.Put(t, recordKey, "1")
	now := s.etcd.Put(t, recordKey, "2")
	if _, err := s.etcd.Client.Compact(t.Context(), now); err != nil {
		t.Fatal(err)
	}
	w := s.client(t, url, "reader").Watch(t.Context(), "/skydns/", clientv3.WithPrefix(), clientv3.WithRev(old))
	select {
	case resp := <-w:
		if resp.CompactRevision != now {
			t.Errorf("got %+v, want compact revision %d", resp, now)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no answer to a watch from a compacted revision")
	}
}

func TestSkydnsReaderFollowsTheBatchedRelay(t *testing.T) {
	s := newSetup(t)
	s.watchBatch = 100 * time.Millisecond
	url := s.startRelay(t, "relay", "reader")
	var mu sync.Mutex
	seen := map[string]string{}
	lw := &etcdstore.ListWatcher{
		Source: s.client(t, url, "reader"), Prefix: "/skydns/", Logger: slog.New(slog.DiscardHandler),
		OnState: func(etcdstore.State) {},
		OnUpdate: func(u contract.Update) {
			mu.Lock()
			defer mu.Unlock()
			for _, ev := range u.Events {
				seen[ev.Key] = string(ev.Value)
			}
		},
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); _ = lw.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	for i := range 10 {
		key := fmt.Sprintf("/skydns/local/cluster/svc/default/new%d/x", i)
		s.etcd.Put(t, key, fmt.Sprint(i))
		polltest.True(t, key+" mirrored", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return seen[key] == fmt.Sprint(i)
		})
	}
}
