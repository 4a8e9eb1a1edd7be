package etcdstore_test

import (
	"context"
	"errors"
	"fmt"
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

// recorder keeps what a ListWatcher delivered and mirrors it into a map.
type recorder struct {
	mu      sync.Mutex
	updates []contract.Update
	content map[string]string
	state   etcdstore.State
}

func (r *recorder) onUpdate(u contract.Update) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.updates = append(r.updates, u)
	if u.Full {
		r.content = map[string]string{}
	}
	for _, ev := range u.Events {
		if ev.Type == contract.Delete {
			delete(r.content, ev.Key)
		} else {
			r.content[ev.Key] = string(ev.Value)
		}
	}
}

func (r *recorder) onState(s etcdstore.State) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.state = s
}

func (r *recorder) get(key string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.content[key]
	return v, ok
}

func (r *recorder) snapshot() ([]contract.Update, etcdstore.State, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]contract.Update(nil), r.updates...), r.state, len(r.content)
}

func startListWatch(t *testing.T, client *clientv3.Client, pageSize int64) *recorder {
	t.Helper()
	rec := &recorder{}
	lw := &etcdstore.ListWatcher{
		Source: client, Prefix: "/skydns/", PageSize: pageSize,
		ProbeInterval: 100 * time.Millisecond, RequestTimeout: time.Second,
		OnUpdate: rec.onUpdate, OnState: rec.onState,
	}
	runListWatcher(t, lw)
	return rec
}

func TestListIsPaginatedAtOneRevisionThenWatched(t *testing.T) {
	srv := etcdtest.Start(t)
	for i := range 7 {
		srv.Put(t, fmt.Sprintf("/skydns/local/k%d", i), "v")
	}
	srv.Put(t, "/other/key", "outside the prefix")
	rec := startListWatch(t, srv.Client, 2)
	polltest.True(t, "the full list", func() bool { _, s, n := rec.snapshot(); return s.Synced && n == 7 })

	srv.Put(t, "/skydns/local/new", "n")
	srv.Delete(t, "/skydns/local/k0")
	polltest.True(t, "the put and the delete", func() bool {
		_, ok := rec.get("/skydns/local/k0")
		v, _ := rec.get("/skydns/local/new")
		return !ok && v == "n"
	})
	updates, _, _ := rec.snapshot()
	if !updates[0].Full || len(updates[0].Events) != 7 {
		t.Fatalf("first update should be a full list of 7 keys, got %+v", updates[0])
	}
}

func TestOneTxnArrivesAsOneUpdate(t *testing.T) {
	srv := etcdtest.Start(t)
	rec := startListWatch(t, srv.Client, 0)
	polltest.True(t, "sync", func() bool { _, s, _ := rec.snapshot(); return s.Synced })

	var ops []clientv3.Op
	for i := range 50 {
		ops = append(ops, clientv3.OpPut(fmt.Sprintf("/skydns/txn/k%02d", i), "v"))
	}
	resp, err := srv.Client.Txn(context.Background()).Then(ops...).Commit()
	if err != nil {
		t.Fatal(err)
	}
	polltest.True(t, "the txn", func() bool { _, _, n := rec.snapshot(); return n == 50 })
	updates, _, _ := rec.snapshot()
	last := updates[len(updates)-1]
	if last.Revision != resp.Header.Revision || len(last.Events) != 50 {
		t.Fatalf("want one update of 50 events at revision %d, got %d events at %d", resp.Header.Revision, len(last.Events), last.Revision)
	}
}

// startSyncedOnOneKey starts etcd holding /skydns/a = 1 and a ListWatcher
// that has listed it.
func startSyncedOnOneKey(t *testing.T) (*etcdtest.Server, *recorder) {
	t.Helper()
	srv := etcdtest.Start(t)
	srv.Put(t, "/skydns/a", "1")
	rec := startListWatch(t, srv.Client, 0)
	polltest.True(t, "sync", func() bool { _, s, n := rec.snapshot(); return s.Synced && n == 1 })
	return srv, rec
}

func TestACompactedWatchListsAgainWithoutMissingAChange(t *testing.T) {
	srv, rec := startSyncedOnOneKey(t)

	// Stop the server, write behind the watcher's back, compact, and restart:
	// the watcher's next revision is gone, so it must list again.
	url := srv.ClientURL()
	srv.Stop()
	srv.Restart(t, url)
	srv.Put(t, "/skydns/b", "2")
	rev := srv.Put(t, "/skydns/a", "3")
	if _, err := srv.Client.Compact(context.Background(), rev); err != nil {
		t.Fatal(err)
	}
	polltest.True(t, "both changes", func() bool {
		a, _ := rec.get("/skydns/a")
		b, _ := rec.get("/skydns/b")
		return a == "3" && b == "2"
	})
}

func TestEtcdAwayIsReportedAndChangesResumeWhenBack(t *testing.T) {
	srv, rec := startSyncedOnOneKey(t)

	url := srv.ClientURL()
	srv.Stop()
	polltest.True(t, "disconnected state", func() bool { _, s, _ := rec.snapshot(); return !s.Connected && s.Err != nil })
	if v, _ := rec.get("/skydns/a"); v != "1" {
		t.Fatalf("content lost while etcd is away: %q", v)
	}

	srv.Restart(t, url)
	srv.Put(t, "/skydns/a", "2")
	polltest.True(t, "the change made after the restart", func() bool { v, _ := rec.get("/skydns/a"); return v == "2" })
	polltest.True(t, "connected state", func() bool { _, s, _ := rec.snapshot(); return s.Connected })
}

// TestConfirmedFollowsEtcdsAnswers checks State.Confirmed: it advances
// with every probe while etcd answers, stays put while etcd is away, and
// advances again once it is back.
func TestConfirmedFollowsEtcdsAnswers(t *testing.T) {
	srv := etcdtest.Start(t)
	rec := startListWatch(t, srv.Client, 0)
	confirmed := func() time.Time { _, s, _ := rec.snapshot(); return s.Confirmed }
	polltest.True(t, "sync", func() bool { return !confirmed().IsZero() })
	first := confirmed()
	polltest.True(t, "a probe confirms again while the watch is quiet", func() bool { return confirmed().After(first) })

	url := srv.ClientURL()
	srv.Stop()
	polltest.True(t, "disconnected state", func() bool { _, s, _ := rec.snapshot(); return !s.Connected })
	last := confirmed()
	polltest.True(t, "a failed probe after the disconnection", func() bool {
		_, s, _ := rec.snapshot()
		return s.Err != nil && time.Since(s.Since) > 300*time.Millisecond
	})
	if got := confirmed(); !got.Equal(last) {
		t.Fatalf("Confirmed moved from %v to %v while etcd was away", last, got)
	}
	srv.Restart(t, url)
	polltest.True(t, "confirmed again once etcd is back", func() bool { return confirmed().After(last) })
}

func TestADifferentEtcdClusterAtTheSameURLIsListedAgain(t *testing.T) {
	old := etcdtest.Start(t)
	old.Put(t, "/skydns/a", "1")
	old.Put(t, "/skydns/gone", "x")
	rec := startListWatch(t, old.Client, 0)
	polltest.True(t, "sync", func() bool { _, s, n := rec.snapshot(); return s.Synced && n == 2 })

	// The etcd is replaced by a new cluster at the same URL, whose revisions
	// are lower than the one the watcher has seen: resuming the watch would
	// wait for revisions that mean something else, and keep /skydns/gone.
	url := old.ClientURL()
	old.Stop()
	replaced := etcdtest.StartAt(t, url)
	replaced.Put(t, "/skydns/b", "2")
	polltest.True(t, "the new cluster's records only", func() bool {
		_, gone := rec.get("/skydns/gone")
		b, _ := rec.get("/skydns/b")
		_, _, n := rec.snapshot()
		return !gone && b == "2" && n == 1
	})
	if updates, _, _ := rec.snapshot(); !updates[len(updates)-1].Full && !updates[len(updates)-2].Full {
		t.Errorf("want a full list of the new cluster among the last updates")
	}
}

func TestEtcdGoneBetweenTheListAndTheWatchIsReported(t *testing.T) {
	srv := etcdtest.Start(t)
	srv.Put(t, "/skydns/a", "1")
	rec := &recorder{}
	var once sync.Once
	lw := &etcdstore.ListWatcher{
		Source: srv.Client, Prefix: "/skydns/",
		ProbeInterval: 100 * time.Millisecond, RequestTimeout: time.Second,
		// The server stops right after the list is delivered, before the
		// watch is opened: the client's Watch then waits for a connection.
		OnUpdate: func(u contract.Update) { rec.onUpdate(u); once.Do(srv.Stop) },
		OnState:  rec.onState,
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = lw.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	polltest.True(t, "disconnected state", func() bool { _, s, _ := rec.snapshot(); return s.Synced && !s.Connected && s.Err != nil })
	if v, _ := rec.get("/skydns/a"); v != "1" {
		t.Fatalf("the listed record is gone: %q", v)
	}
}

// countingSource is an etcd client that counts the Gets made through it,
// list pages and probes, but not the check of a revision before a watch
// (a count at that revision), and fails the failGet-th one (none if 0),
// and with failLast set every one from the failGet-th to the failLast-th.
type countingSource struct {
	*clientv3.Client
	gets              atomic.Int64
	failGet, failLast int64
}

func (c *countingSource) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	if op := clientv3.OpGet(key, opts...); op.IsCountOnly() && op.Rev() != 0 {
		return c.Client.Get(ctx, key, opts...)
	}
	if n := c.gets.Add(1); n == c.failGet || n >= c.failGet && n <= c.failLast {
		return nil, errors.New("the page is lost")
	}
	return c.Client.Get(ctx, key, opts...)
}

// TestAFailedListPageIsRetriedWithoutStartingOver: a list of 4 pages whose
// second page fails once costs 6 Gets (one asks etcd's revision), not a
// list started over, and delivers every key once at one revision.
func TestAFailedListPageIsRetriedWithoutStartingOver(t *testing.T) {
	srv := etcdtest.Start(t)
	for i := range 7 {
		srv.Put(t, fmt.Sprintf("/skydns/local/k%d", i), "v")
	}
	src := &countingSource{Client: srv.Client, failGet: 3}
	rec := &recorder{}
	runListWatcher(t, &etcdstore.ListWatcher{
		Source: src, Prefix: "/skydns/", PageSize: 2, ProbeInterval: time.Minute, RequestTimeout: time.Second,
		OnUpdate: rec.onUpdate, OnState: rec.onState,
	})
	polltest.True(t, "sync", func() bool { _, s, _ := rec.snapshot(); return s.Synced })
	if gets := src.gets.Load(); gets != 6 {
		t.Errorf("%d Gets for the revision, 4 pages and one failure, want 6", gets)
	}
	updates, _, n := rec.snapshot()
	if n != 7 || len(updates) != 1 || len(updates[0].Events) != 7 {
		t.Fatalf("want one full update of 7 keys, got %d updates, %d keys", len(updates), n)
	}
}

// startRelistingAtOnce runs a ListWatcher of /skydns/ over src that
// probes every 100 ms and lists again at once after a compaction, and
// waits for its first list.
func startRelistingAtOnce(t *testing.T, src etcdstore.Source) *recorder {
	t.Helper()
	rec := &recorder{}
	runListWatcher(t, &etcdstore.ListWatcher{
		Source: src, Prefix: "/skydns/", ProbeInterval: 100 * time.Millisecond, RequestTimeout: time.Second,
		RelistJitter: -1, OnUpdate: rec.onUpdate, OnState: rec.onState,
	})
	polltest.True(t, "sync", func() bool { _, s, _ := rec.snapshot(); return s.Synced })
	return rec
}

// fullLists are the revisions of the full lists among updates.
func fullLists(updates []contract.Update) []int64 {
	var revisions []int64
	for _, u := range updates {
		if u.Full {
			revisions = append(revisions, u.Revision)
		}
	}
	return revisions
}

// TestAListAfterACompactionReadsARoundedRevisionWhileItIsKept: a first
// list reads etcd's newest revision. A reader cut off at revision 2 while
// etcd reaches 21 and compacts 12 lists 16, the revision readers
// re-listing up to 31 share, and watches the rest; with 18 compacted, it
// lists 21.
func TestAListAfterACompactionReadsARoundedRevisionWhileItIsKept(t *testing.T) {
	for _, c := range []struct{ compact, want int64 }{{12, 16}, {18, 21}} {
		t.Run(fmt.Sprintf("compacted at %d", c.compact), func(t *testing.T) {
			srv := etcdtest.Start(t)
			srv.Put(t, "/skydns/local/k00", "v")
			gate := &etcdtest.Gate{Client: srv.Client}
			rec := startRelistingAtOnce(t, gate)

			gate.Hold()
			var now int64
			for i := 1; i < 20; i++ {
				now = srv.Put(t, fmt.Sprintf("/skydns/local/k%02d", i), "v")
			}
			if now != 21 {
				t.Fatalf("etcd at revision %d, want 21", now)
			}
			if _, err := srv.Client.Compact(context.Background(), c.compact); err != nil {
				t.Fatal(err)
			}
			gate.Release()
			polltest.True(t, "every key, the ones after the list's revision watched", func() bool {
				updates, _, n := rec.snapshot()
				return len(fullLists(updates)) == 2 && n == 20
			})
			updates, _, _ := rec.snapshot()
			if lists := fullLists(updates); lists[0] != 2 || lists[1] != c.want {
				t.Errorf("full lists at revisions %v, want [2 %d]", lists, c.want)
			}
		})
	}
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
	src := &etcdtest.Gate{Client: srv.Client}
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

// stallingSource is an etcd client whose next watch can be made silent:
// stallNextWatch ends the open watch, and the one opened after it delivers
// nothing, as a watch that joined a dead coalesced watch in a grpc-proxy.
type stallingSource struct {
	*clientv3.Client
	mu        sync.Mutex
	cancel    context.CancelFunc // ends the open watch
	stallNext bool
}

func (s *stallingSource) Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stallNext {
		s.stallNext = false
		silent := make(chan clientv3.WatchResponse)
		go func() { <-ctx.Done(); close(silent) }()
		return silent
	}
	ctx, s.cancel = context.WithCancel(ctx)
	return s.Client.Watch(ctx, key, opts...)
}

func (s *stallingSource) stallNextWatch() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stallNext = true
	s.cancel()
}

// startStallWatching runs a ListWatcher of /skydns/ over src that takes a
// watch silent for a second as stalled, and waits for its first list.
func startStallWatching(t *testing.T, src etcdstore.Source) *recorder {
	t.Helper()
	rec := &recorder{}
	runListWatcher(t, &etcdstore.ListWatcher{
		Source: src, Prefix: "/skydns/", ProbeInterval: 200 * time.Millisecond, StallAfter: time.Second,
		RequestTimeout: time.Second, OnUpdate: rec.onUpdate, OnState: rec.onState,
	})
	polltest.True(t, "sync", func() bool { _, s, _ := rec.snapshot(); return s.Synced })
	return rec
}

// awaitProgressNotifications waits until what rec holds has been confirmed
// for 300 ms more: a quiet watch's progress notifications do that, and a
// ListWatcher takes a watch as stalled only once it has seen two.
func awaitProgressNotifications(t *testing.T, rec *recorder) {
	t.Helper()
	_, before, _ := rec.snapshot()
	polltest.True(t, "progress notifications", func() bool {
		_, s, _ := rec.snapshot()
		return s.Confirmed.Sub(before.Confirmed) > 300*time.Millisecond
	})
}

// TestASilentWatchIsOpenedAgainOnceProgressNotificationsWereSeen: after
// progress notifications have been seen, a watch that delivers nothing
// while etcd answers probes is opened again, and the change it missed
// arrives.
func TestASilentWatchIsOpenedAgainOnceProgressNotificationsWereSeen(t *testing.T) {
	srv := etcdtest.StartWithProgressNotify(t, 100*time.Millisecond)
	srv.Put(t, "/skydns/a", "1")
	src := &stallingSource{Client: srv.Client}
	rec := startStallWatching(t, src)
	srv.Put(t, "/other/key", "moves etcd's revision to the watch's start")
	awaitProgressNotifications(t, rec)

	src.stallNextWatch()
	srv.Put(t, "/skydns/a", "2")
	polltest.True(t, "the change made while the watch was silent", func() bool { v, _ := rec.get("/skydns/a"); return v == "2" })
}
