package etcdstore_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/etcdstore"
	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/polltest"
)

// TestOnListTakesTheListKeyByKeyAndAFailedListIsDropped: with OnList set,
// a list's keys go to what OnList returned, in key order, and the Full
// update carries none. A list whose second page fails beyond its retries
// is dropped; the next list starts with a new OnList call and holds every
// key.
func TestOnListTakesTheListKeyByKeyAndAFailedListIsDropped(t *testing.T) {
	srv := etcdtest.Start(t)
	var want []string
	for i := range 7 {
		key := fmt.Sprintf("/skydns/local/k%d", i)
		srv.Put(t, key, "v")
		want = append(want, key)
	}
	// Get 1 asks the revision, 2 is the first page; 3 and its 5 retries fail.
	src := &countingSource{Client: srv.Client, failGet: 3, failLast: 8}
	var mu sync.Mutex
	var lists [][]string
	rec := &recorder{}
	runListWatcher(t, &etcdstore.ListWatcher{
		Source: src, Prefix: "/skydns/", PageSize: 2, ProbeInterval: time.Minute, RequestTimeout: time.Second,
		OnUpdate: rec.onUpdate, OnState: rec.onState,
		OnList: func() func(contract.Event) {
			mu.Lock()
			defer mu.Unlock()
			lists = append(lists, nil)
			i := len(lists) - 1
			return func(ev contract.Event) {
				mu.Lock()
				defer mu.Unlock()
				lists[i] = append(lists[i], ev.Key)
			}
		},
	})
	polltest.True(t, "sync", func() bool { _, s, _ := rec.snapshot(); return s.Synced })
	mu.Lock()
	defer mu.Unlock()
	if len(lists) != 2 || len(lists[0]) != 2 || !slices.Equal(lists[1], want) {
		t.Fatalf("lists given to OnList: %q, want the first page of a failed list, then %q", lists, want)
	}
	updates, _, _ := rec.snapshot()
	if len(updates) != 1 || !updates[0].Full || len(updates[0].Events) != 0 {
		t.Fatalf("updates %+v, want one Full update with no events", updates)
	}
}
