package relay_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/etcdstore"
	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/polltest"
)

// TestSkydnsFollowsItsWatchThroughTheRelayAfterEveryStall runs skydns's
// ListWatcher through the relay serving etcd's grpc-proxy Watch (where a
// watch can join a dead coalesced one), whose etcd user holds what
// etcd-auth grants, and silences its watch seven times: each time the
// watch is opened again over the next, wider range, which the relay opens
// upstream as its own user, and the change made meanwhile arrives.
func TestSkydnsFollowsItsWatchThroughTheRelayAfterEveryStall(t *testing.T) {
	s := newSetupWithProgressNotify(t, 100*time.Millisecond)
	src := etcdtest.NewMutingSource(s.client(t, s.startRelay(t, "relay", "reader"), "reader"))
	seen := &lastValues{values: map[string]string{}}
	lw := &etcdstore.ListWatcher{Source: src, Prefix: "/skydns/", ProbeInterval: 100 * time.Millisecond,
		StallAfter: 500 * time.Millisecond, RequestTimeout: time.Second, OnUpdate: seen.apply}
	done := make(chan struct{})
	go func() { defer close(done); _ = lw.Run(t.Context()) }()
	t.Cleanup(func() { <-done }) // t.Context ends first
	polltest.True(t, "the list", func() bool { return seen.get(recordKey) != "" })
	// etcd sends progress notifications once its revision reaches the
	// watch's start; a ListWatcher takes a silent watch as stalled once
	// it has seen two.
	s.etcd.Put(t, "/other/key", "moves etcd's revision to the watch's start")
	polltest.True(t, "progress notifications through the relay", func() bool { return src.Progress() >= 2 })
	for stall := 1; stall < len(etcdstore.WatchEnds("/skydns/")); stall++ {
		src.Mute()
		want := fmt.Sprintf(`{"host":"10.0.1.%d"}`, stall)
		s.etcd.Put(t, recordKey, want)
		polltest.True(t, fmt.Sprintf("the change made during stall %d", stall), func() bool { return seen.get(recordKey) == want })
	}
}

// lastValues is each key's value as a ListWatcher delivered it.
type lastValues struct {
	mu     sync.Mutex
	values map[string]string
}

func (l *lastValues) apply(u contract.Update) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ev := range u.Events {
		l.values[ev.Key] = string(ev.Value)
	}
}

func (l *lastValues) get(key string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.values[key]
}
