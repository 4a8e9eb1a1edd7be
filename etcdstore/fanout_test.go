package etcdstore_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/etcdstore"
	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/polltest"
)

// countingSource is an etcd client that counts the Gets made through it.
type countingSource struct {
	*clientv3.Client
	gets atomic.Int64
}

func (c *countingSource) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	c.gets.Add(1)
	return c.Client.Get(ctx, key, opts...)
}

// TestAQuietWatchWithProgressNotificationsIsConfirmedWithoutProbes: with
// etcd sending progress notifications more often than ProbeInterval, a
// quiet watch's Confirmed advances and no probe (a Get) is sent. etcd
// sends them only once its revision reaches the watch's start revision
// (the listed one plus one), so one write outside the prefix comes first,
// as any write in a live cluster does.
func TestAQuietWatchWithProgressNotificationsIsConfirmedWithoutProbes(t *testing.T) {
	srv := etcdtest.StartWithProgressNotify(t, 100*time.Millisecond)
	srv.Put(t, "/skydns/a", "1")
	src := &countingSource{Client: srv.Client}
	rec := &recorder{}
	const probeInterval = 700 * time.Millisecond
	runListWatcher(t, &etcdstore.ListWatcher{
		Source: src, Prefix: "/skydns/", ProbeInterval: probeInterval, RequestTimeout: time.Second,
		OnUpdate: rec.onUpdate, OnState: rec.onState,
	})
	polltest.True(t, "sync", func() bool { _, s, _ := rec.snapshot(); return s.Synced })
	srv.Put(t, "/other/key", "moves etcd's revision to the watch's start")
	listGets := src.gets.Load()
	_, synced, _ := rec.snapshot()

	quiet := 3 * probeInterval
	polltest.True(t, "three probe intervals of quiet, confirmed throughout", func() bool {
		_, s, _ := rec.snapshot()
		return s.Confirmed.Sub(synced.Confirmed) > quiet
	})
	_, s, _ := rec.snapshot()
	if probes := src.gets.Load() - listGets; probes != 0 {
		t.Fatalf("%d probes sent in %v of quiet watch with progress notifications every 100ms", probes, quiet)
	}
	if !s.Connected {
		t.Fatalf("state %+v: want connected", s)
	}
}

// gatedSource is an etcd client whose watches can be held: Hold ends every
// open watch and makes new ones wait, without events, until Release ends
// them too. Gets pass through, so the readers stay connected meanwhile.
type gatedSource struct {
	*clientv3.Client
	mu      sync.Mutex
	held    chan struct{} // closed by Release; nil while not held
	cancels []context.CancelFunc
}

func (g *gatedSource) Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan {
	g.mu.Lock()
	held := g.held
	if held != nil {
		g.mu.Unlock()
		ch := make(chan clientv3.WatchResponse)
		go func() { <-held; close(ch) }()
		return ch
	}
	ctx, cancel := context.WithCancel(ctx)
	g.cancels = append(g.cancels, cancel)
	g.mu.Unlock()
	return g.Client.Watch(ctx, key, opts...)
}

func (g *gatedSource) Hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.held = make(chan struct{})
	for _, cancel := range g.cancels {
		cancel()
	}
	g.cancels = nil
}

func (g *gatedSource) Release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	close(g.held)
	g.held = nil
}

// listTimes records when each reader delivered a full list.
type listTimes struct {
	mu    sync.Mutex
	lists map[int][]time.Time
}

func (l *listTimes) onUpdate(reader int) func(contract.Update) {
	return func(u contract.Update) {
		if !u.Full {
			return
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lists[reader] = append(l.lists[reader], time.Now())
	}
}

// after returns, per reader, the lists delivered after t.
func (l *listTimes) after(t time.Time) map[int][]time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[int][]time.Time{}
	for reader, times := range l.lists {
		for _, at := range times {
			if at.After(t) {
				out[reader] = append(out[reader], at)
			}
		}
	}
	return out
}

// TestReadersCompactedTogetherListAgainSpreadOverTheJitter: readers whose
// revision is compacted at the same moment each list once more, at times
// spread over RelistJitter instead of all at once. The delays come from
// math/rand/v2's global source; with 20 readers and a 2s window, the
// asserted spread (over 0.5s) fails by chance with probability below 1e-10.
func TestReadersCompactedTogetherListAgainSpreadOverTheJitter(t *testing.T) {
	const readers, jitter = 20, 2 * time.Second
	srv := etcdtest.Start(t)
	srv.Put(t, "/skydns/a", "1")
	src := &gatedSource{Client: srv.Client}
	lists := &listTimes{lists: map[int][]time.Time{}}
	for i := range readers {
		runListWatcher(t, &etcdstore.ListWatcher{
			Source: src, Prefix: "/skydns/", RelistJitter: jitter,
			ProbeInterval: 100 * time.Millisecond, RequestTimeout: time.Second,
			OnUpdate: lists.onUpdate(i),
		})
	}
	polltest.True(t, "every reader listed", func() bool { return len(lists.after(time.Time{})) == readers })

	// With the watches held, changes are made and compacted away: each
	// reader's next revision is gone when its watch resumes.
	src.Hold()
	srv.Put(t, "/skydns/b", "2")
	rev := srv.Put(t, "/skydns/a", "3")
	if _, err := srv.Client.Compact(context.Background(), rev); err != nil {
		t.Fatal(err)
	}
	released := time.Now()
	src.Release()
	polltest.True(t, "every reader listed again", func() bool { return len(lists.after(released)) == readers })

	first, last := released.Add(time.Hour), released
	for reader, times := range lists.after(released) {
		if len(times) != 1 {
			t.Errorf("reader %d listed %d times after the compaction, want once", reader, len(times))
		}
		first, last = minTime(first, times[0]), maxTime(last, times[0])
	}
	if spread := last.Sub(first); spread < jitter/4 {
		t.Errorf("the re-lists came within %v of each other, want them spread over the %v jitter", spread, jitter)
	}
	if late := last.Sub(released); late > jitter+time.Second {
		t.Errorf("the last re-list came %v after the compaction, want within the %v jitter and a second", late, jitter)
	}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// runListWatcher runs lw until the test ends.
func runListWatcher(t *testing.T, lw *etcdstore.ListWatcher) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = lw.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

