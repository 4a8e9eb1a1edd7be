package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kubesky/kubesky/contract"
)

// Source is the part of an etcd client a ListWatcher uses.
type Source interface {
	Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error)
	Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan
}

var _ Source = (*clientv3.Client)(nil)

// State is the health of the list-then-watch loop.
type State struct {
	// Synced is true once a full list has been delivered.
	Synced bool
	// Connected is false while etcd cannot be reached.
	Connected bool
	// Since is when Connected last changed.
	Since time.Time
	// Err is the last error seen while disconnected.
	Err error
	// Confirmed is when etcd last answered (a list, a watch response or a
	// probe), so when what was delivered was last known to be current;
	// zero until the first list.
	Confirmed time.Time
}

// ListWatcher mirrors a key prefix: it lists the prefix at one revision,
// then watches from the next one, delivering each revision's events
// together. A compacted watch lists again; a broken watch resumes from the
// last revision seen; a different etcd cluster answering at the endpoints
// (replaced, or restored from a backup: its revisions are not the ones
// seen) is listed again. It never gives up while its context lives.
type ListWatcher struct {
	Source Source
	Prefix string
	// PageSize bounds the keys of a list's first request (default 1000);
	// the later ones grow to an eighth of the prefix when that is more
	// (see Scan).
	PageSize int64
	// RequestTimeout is each list request's deadline (default 5s).
	RequestTimeout time.Duration
	// ProbeInterval is how long the watch may stay silent before etcd's
	// reachability is checked with a probe (default 2s). The watch asks
	// for progress notifications, so any watch response (events or a
	// progress notification) confirms the mirror current and puts the
	// probe off: under churn, or with etcd's
	// --watch-progress-notify-interval below ProbeInterval, no probe is
	// sent at all.
	ProbeInterval time.Duration
	// StallAfter is how long a watch may deliver nothing, not even a
	// progress notification, while etcd answers probes, before it is
	// taken as stalled and opened again (default 5 × ProbeInterval; at
	// least 3 times the gap seen between two progress notifications). It
	// applies only once two progress notifications have been seen: etcd
	// sends them at its --watch-progress-notify-interval (10 minutes
	// unless set). A grpc-proxy can leave a watch silent for good: a new
	// watch may join a coalesced upstream watch that a compaction ended
	// (see watchEnd).
	StallAfter time.Duration
	// RelistJitter spreads the re-lists after a compaction: the list waits
	// a random time in [0, RelistJitter) first, so thousands of readers
	// whose revision was compacted at once do not list together (default
	// 2s; negative lists at once).
	RelistJitter time.Duration
	// OnUpdate receives updates in revision order, from one goroutine.
	OnUpdate func(contract.Update)
	// OnList, if set, is called as each full list starts, and returns
	// what takes that list's events one at a time as its pages arrive
	// (from OnUpdate's goroutine), so that the list is never held whole:
	// its Full update then comes with no events. A list that fails is
	// dropped; the next starts with a new call.
	OnList func() func(contract.Event)
	// OnState receives every change of State, Confirmed's included (at
	// least once a ProbeInterval while etcd answers).
	OnState func(State)
	Logger  *slog.Logger

	state         State
	revision      int64         // last revision delivered
	clusterID     uint64        // the etcd cluster that revision belongs to
	progressAt    time.Time     // when the last progress notification arrived
	progressEvery time.Duration // the gap between the last two; 0 until two arrived
	watchVariant  int           // which range the watch covers the prefix with (see watchEnd)
	compacted     bool          // the watch was compacted: the next list may share an older revision
}

var (
	// errOtherCluster says that the etcd answering is not the cluster listed.
	errOtherCluster = errors.New("a different etcd cluster answers")
	// errStalled says that the watch went silent while etcd answers.
	errStalled = errors.New("the watch delivered nothing while etcd answered")
)

// Run lists and watches until ctx ends; it returns ctx's error.
func (lw *ListWatcher) Run(ctx context.Context) error {
	lw.defaults()
	backoff := NewBackoff(100*time.Millisecond, 5*time.Second)
	for ctx.Err() == nil {
		if lw.revision == 0 {
			if err := lw.list(ctx); err != nil {
				lw.disconnected(err)
				backoff.Wait(ctx)
				continue
			}
		}
		err := lw.watch(ctx)
		switch {
		case errors.Is(err, rpctypes.ErrCompacted):
			wait := lw.relistDelay()
			lw.Logger.Info("watch compacted, listing again", "prefix", lw.Prefix, "revision", lw.revision, "after", wait)
			lw.revision, lw.compacted = 0, true
			sleepCtx(ctx, wait)
		case errors.Is(err, errStalled):
			lw.watchVariant = (lw.watchVariant + 1) % watchVariants
			lw.Logger.Warn("watch stalled, opening it again over another range", "prefix", lw.Prefix, "revision", lw.revision, "silent", lw.StallAfter, "range_end", lw.watchEnd())
		case errors.Is(err, errOtherCluster):
			lw.Logger.Warn("a different etcd cluster answers at the endpoints; listing it again", "prefix", lw.Prefix, "err", err)
			lw.revision = 0
		case err != nil && ctx.Err() == nil:
			lw.disconnected(err)
			backoff.Wait(ctx)
		default:
			backoff.Reset()
		}
	}
	return ctx.Err()
}

func (lw *ListWatcher) defaults() {
	if lw.PageSize <= 0 {
		lw.PageSize = 1000
	}
	if lw.RequestTimeout <= 0 {
		lw.RequestTimeout = 5 * time.Second
	}
	if lw.ProbeInterval <= 0 {
		lw.ProbeInterval = 2 * time.Second
	}
	if lw.StallAfter <= 0 {
		lw.StallAfter = 5 * lw.ProbeInterval
	}
	if lw.RelistJitter == 0 {
		lw.RelistJitter = 2 * time.Second
	}
	if lw.Logger == nil {
		lw.Logger = slog.New(slog.DiscardHandler)
	}
	if lw.OnState == nil {
		lw.OnState = func(State) {}
	}
}

// list reads the whole prefix at one revision, page by page, with
// serializable requests at a fixed revision, which a grpc-proxy answers
// from its cache once one reader has sent them: readers listing the same
// revision share one read of etcd. A first list reads etcd's revision now,
// which readers listing while etcd is quiet share. A list after a
// compaction reads at a revision readers compacted together share (see
// sharedRevisions): newer than the compacted one the mirror holds, and
// caught up by the watch. Each such candidate is first asked for with a
// linearizable count, which a proxy always passes on: its cache knows
// nothing of compactions made elsewhere, and would hand out pages of a
// compacted revision, whose watch would fail, to be listed from the cache
// again, for good. A compacted candidate moves the list to the next one,
// the newest last.
func (lw *ListWatcher) list(ctx context.Context) error {
	now, err := lw.ask(ctx)
	if err != nil {
		return err
	}
	candidates := []int64{now.Header.Revision}
	if lw.compacted {
		candidates = sharedRevisions(now.Header.Revision)
	}
	for _, revision := range candidates {
		err = lw.listKept(ctx, revision, now)
		if !errors.Is(err, rpctypes.ErrCompacted) {
			break
		}
		lw.Logger.Debug("list revision compacted, trying a newer one", "prefix", lw.Prefix, "revision", revision)
	}
	if errors.Is(err, errCachedElsewhere) {
		lw.Logger.Warn("cached list pages came from another etcd cluster; listing without the cache", "prefix", lw.Prefix, "err", err)
		err = lw.readList(ctx, &pages{revision: now.Header.Revision, cluster: now.Header.ClusterId})
	}
	if err == nil {
		lw.compacted = false
	}
	return err
}

// listKept lists at revision, first checking that etcd keeps it unless it
// is now's.
func (lw *ListWatcher) listKept(ctx context.Context, revision int64, now *clientv3.GetResponse) error {
	cluster := now.Header.ClusterId
	if revision != now.Header.Revision {
		kept, err := lw.countAt(ctx, revision)
		if err != nil {
			return err
		}
		cluster = kept.Header.ClusterId
	}
	return lw.readList(ctx, &pages{revision: revision, serializable: true, cluster: cluster})
}

// sharedRevisions are the revisions a list after a compaction tries when
// etcd is at now, oldest first: now rounded down to a multiple of each of
// listQuanta, then now itself. Readers whose lists start within a quantum
// of one another read at the same revision.
func sharedRevisions(now int64) []int64 {
	var revisions []int64
	for _, q := range listQuanta {
		r := now - now%q
		if r > 0 && (len(revisions) == 0 || r > revisions[len(revisions)-1]) && r < now {
			revisions = append(revisions, r)
		}
	}
	return append(revisions, now)
}

// listQuanta are the revision steps sharedRevisions rounds to, coarsest
// first: the finer ones still let readers compacted together share a
// revision when the coarser ones are compacted too.
var listQuanta = []int64{4096, 256, 16}

// readList reads the prefix with p (its revision, how, from which
// cluster) and delivers it as one full update. Pages must come from the
// cluster that answered the revision: a proxy's cache outlives the etcd
// cluster behind it. A failed page is retried from where it stopped up to pageRetries times:
// under load (thousands of readers listing at once) a list that started
// over at every failed page would never end. A compacted revision, or a
// page from another cluster, ends it.
func (lw *ListWatcher) readList(ctx context.Context, p *pages) error {
	var events []contract.Event
	keep := func(kv *mvccpb.KeyValue) {
		if events == nil {
			// Sized once from the first page's count: a list grown by
			// appends holds its last two copies at once.
			events = make([]contract.Event, 0, p.total)
		}
		events = append(events, listed(kv))
	}
	if lw.OnList != nil {
		add := lw.OnList()
		keep = func(kv *mvccpb.KeyValue) { add(listed(kv)) }
	}
	p.kv, p.name, p.from, p.end = lw.Source, lw.Prefix, lw.Prefix, clientv3.GetPrefixRangeEnd(lw.Prefix)
	p.size, p.timeout = lw.PageSize, lw.RequestTimeout
	backoff := NewBackoff(100*time.Millisecond, lw.RequestTimeout)
	for retry := 0; ; retry++ {
		err := p.read(ctx, keep)
		if err == nil {
			break
		}
		if retry == pageRetries || errors.Is(err, rpctypes.ErrCompacted) || errors.Is(err, errCachedElsewhere) || !backoff.Wait(ctx) {
			return err
		}
		lw.Logger.Debug("list page failed, retrying it", "prefix", lw.Prefix, "from", p.from, "err", err)
	}
	lw.revision, lw.clusterID = p.revision, p.first.ClusterId
	lw.OnUpdate(contract.Update{Revision: p.revision, Full: true, Events: events})
	lw.setState(State{Synced: true, Connected: true, Confirmed: time.Now()})
	return nil
}

// listed is a listed key as an event.
func listed(kv *mvccpb.KeyValue) contract.Event {
	return contract.Event{Type: contract.Put, Key: string(kv.Key), Value: kv.Value}
}

// pageRetries bounds the retries of failed pages within one list.
const pageRetries = 5

// watch follows the prefix from the revision after the last one delivered
// until the stream breaks. It returns rpctypes.ErrCompacted when that
// revision is gone. The client's Watch blocks until a stream is open, so
// it runs aside while the probes go on: an etcd gone between a list and
// its watch is reported like any other outage.
func (lw *ListWatcher) watch(ctx context.Context) error {
	if err := lw.revisionKept(ctx); err != nil {
		return err
	}
	watchCtx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	opened := make(chan clientv3.WatchChan, 1) // buffered: the opener never blocks on it
	from := lw.revision + 1
	go func() {
		opened <- lw.Source.Watch(watchCtx, lw.Prefix, clientv3.WithRange(lw.watchEnd()), clientv3.WithRev(from), clientv3.WithProgressNotify())
	}()
	var ch clientv3.WatchChan // nil, so never ready, until the watch is open
	silence := time.NewTimer(lw.ProbeInterval)
	defer silence.Stop()
	lastResponse := time.Now()
	for {
		select {
		case ch = <-opened:
		case resp, ok := <-ch:
			if !ok {
				return errors.New("watch channel closed")
			}
			if err := lw.handle(resp); err != nil {
				return err
			}
			lastResponse = time.Now()
			silence.Reset(lw.ProbeInterval)
		case <-silence.C:
			if err := lw.probe(ctx); err != nil {
				return err
			}
			if lw.stalled(time.Since(lastResponse)) {
				return errStalled
			}
			silence.Reset(lw.ProbeInterval)
		case <-ctx.Done():
			return nil
		}
	}
}

// revisionKept asks etcd, before a watch is opened, whether it still
// holds the revision last delivered: a watch from a compacted revision
// fails anyway, but through a grpc-proxy it leaves behind the upstream
// watch the compaction ended, which later watches of the range join and
// stay silent in (see watchEnd). It returns rpctypes.ErrCompacted for a
// compacted revision, and errOtherCluster for a revision etcd has not
// reached or a response from another cluster.
func (lw *ListWatcher) revisionKept(ctx context.Context) error {
	resp, err := lw.countAt(ctx, lw.revision)
	switch {
	case errors.Is(err, rpctypes.ErrFutureRev):
		return fmt.Errorf("%w (behind the revision %d seen)", errOtherCluster, lw.revision)
	case err != nil:
		return err
	}
	return lw.sameCluster(resp.Header)
}

// countAt is a linearizable count, at revision, of the one key named like
// the prefix: it fails with rpctypes.ErrCompacted if etcd no longer holds
// the revision.
func (lw *ListWatcher) countAt(ctx context.Context, revision int64) (*clientv3.GetResponse, error) {
	return getWithin(ctx, lw.Source, lw.RequestTimeout, lw.Prefix, clientv3.WithRev(revision), clientv3.WithCountOnly())
}

// watchVariants is how many ranges a watch of the prefix takes turns with.
const watchVariants = 8

// watchEnd is the end of the range the watch covers. A grpc-proxy joins
// the watches of one range into one upstream watch, and can put a new watch
// into an upstream watch that a compaction ended, where it stays silent
// for good (etcd issue 21813); opening it again over the same range joins
// the same dead watch. So each stalled watch moves to the next of
// watchVariants ranges that hold the same keys of the prefix: the prefix's
// end followed by 0 to 7 zero bytes. The longer ends take in only keys
// made of the prefix's end and zero bytes, outside the prefix; handle
// drops them.
func (lw *ListWatcher) watchEnd() string {
	return clientv3.GetPrefixRangeEnd(lw.Prefix) + strings.Repeat("\x00", lw.watchVariant)
}

// WatchEnds are the ends of the ranges a ListWatcher's watch of prefix
// takes turns with (see watchEnd), narrowest first; the last is
// WatchedEnd(prefix).
func WatchEnds(prefix string) []string {
	lw := &ListWatcher{Prefix: prefix}
	ends := make([]string, watchVariants)
	for lw.watchVariant = range watchVariants {
		ends[lw.watchVariant] = lw.watchEnd()
	}
	return ends
}

// WatchedEnd is the end of the widest range a ListWatcher of prefix
// watches (see watchEnd): an etcd role whose readers list and watch
// prefix must grant read from prefix up to it, or a watch opened again
// after a stall is refused.
func WatchedEnd(prefix string) string {
	return clientv3.GetPrefixRangeEnd(prefix) + strings.Repeat("\x00", watchVariants-1)
}

// handle delivers one watch response, a revision at a time.
func (lw *ListWatcher) handle(resp clientv3.WatchResponse) error {
	if resp.CompactRevision != 0 {
		return rpctypes.ErrCompacted
	}
	if err := resp.Err(); err != nil {
		return err
	}
	if err := lw.sameCluster(&resp.Header); err != nil {
		return err
	}
	if resp.IsProgressNotify() {
		lw.progressed(time.Now())
	}
	lw.connected()
	for start := 0; start < len(resp.Events); {
		revision := resp.Events[start].Kv.ModRevision
		end := start
		var events []contract.Event
		for ; end < len(resp.Events) && resp.Events[end].Kv.ModRevision == revision; end++ {
			if ev := resp.Events[end]; strings.HasPrefix(string(ev.Kv.Key), lw.Prefix) {
				events = append(events, convertEvent(ev))
			}
		}
		lw.revision = revision
		if len(events) > 0 {
			lw.OnUpdate(contract.Update{Revision: revision, Events: events})
		}
		start = end
	}
	return nil
}

func convertEvent(ev *clientv3.Event) contract.Event {
	if ev.Type == clientv3.EventTypeDelete {
		return contract.Event{Type: contract.Delete, Key: string(ev.Kv.Key)}
	}
	return contract.Event{Type: contract.Put, Key: string(ev.Kv.Key), Value: ev.Kv.Value}
}

// probe checks that etcd answers, and that it is the cluster listed; the
// client's watch retries silently while the server is away, so without it
// an outage would go unnoticed. Only a different cluster is an error: the
// watch must stop and the prefix be listed again. It counts the one key
// named like the prefix, not the keys under it: a count of the prefix
// walks etcd's whole index of it, and the header is all the probe needs.
func (lw *ListWatcher) probe(ctx context.Context) error {
	resp, err := lw.ask(ctx)
	switch {
	case err == nil:
		if err := lw.sameCluster(resp.Header); err != nil {
			return err
		}
		lw.connected()
	case ctx.Err() == nil:
		lw.disconnected(err)
	}
	return nil
}

// ask is the probe's request: a linearizable count of the one key named
// like the prefix, whose header says etcd's revision now.
func (lw *ListWatcher) ask(ctx context.Context) (*clientv3.GetResponse, error) {
	return getWithin(ctx, lw.Source, lw.RequestTimeout, lw.Prefix, clientv3.WithCountOnly())
}

// sameCluster checks that a response comes from the history listed: the
// same cluster ID, and a revision not behind the last one delivered (one
// cluster's revisions never go back; a restored backup's do).
func (lw *ListWatcher) sameCluster(h *etcdserverpb.ResponseHeader) error {
	switch {
	case h == nil || h.ClusterId == 0: // made by the client, not a server
		return nil
	case h.ClusterId != lw.clusterID:
		return fmt.Errorf("%w (cluster %x, listed from %x)", errOtherCluster, h.ClusterId, lw.clusterID)
	case h.Revision < lw.revision:
		return fmt.Errorf("%w (at revision %d, behind the %d seen)", errOtherCluster, h.Revision, lw.revision)
	}
	return nil
}

// connected records that etcd just answered.
func (lw *ListWatcher) connected() {
	if !lw.state.Connected {
		lw.Logger.Info("etcd reachable", "prefix", lw.Prefix, "revision", lw.revision)
	}
	lw.setState(State{Synced: lw.state.Synced, Connected: true, Confirmed: time.Now()})
}

func (lw *ListWatcher) disconnected(err error) {
	if lw.state.Connected || lw.state.Since.IsZero() {
		lw.Logger.Warn("etcd unreachable, serving the last snapshot", "prefix", lw.Prefix, "revision", lw.revision, "err", err)
		lw.setState(State{Synced: lw.state.Synced, Connected: false, Err: err, Confirmed: lw.state.Confirmed})
		return
	}
	lw.state.Err = err
	lw.OnState(lw.state)
}

// progressed records a progress notification's arrival.
func (lw *ListWatcher) progressed(now time.Time) {
	if !lw.progressAt.IsZero() {
		lw.progressEvery = now.Sub(lw.progressAt)
	}
	lw.progressAt = now
}

// stalled says whether a watch silent for so long while etcd answers is
// stalled (see StallAfter).
func (lw *ListWatcher) stalled(silent time.Duration) bool {
	return lw.progressEvery > 0 && lw.state.Connected && silent > max(lw.StallAfter, 3*lw.progressEvery)
}

// relistDelay is the random wait before a re-list after a compaction.
func (lw *ListWatcher) relistDelay() time.Duration {
	if lw.RelistJitter <= 0 {
		return 0
	}
	return rand.N(lw.RelistJitter)
}

// sleepCtx waits for d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

func (lw *ListWatcher) setState(s State) {
	if s.Connected != lw.state.Connected || lw.state.Since.IsZero() {
		s.Since = time.Now()
	} else {
		s.Since = lw.state.Since
	}
	lw.state = s
	lw.OnState(s)
}
