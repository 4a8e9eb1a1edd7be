package skydns

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/etcdstore"
	"github.com/kubesky/kubesky/internal/exepages"
	"github.com/kubesky/kubesky/skydns/snapshot"
)

// Mirror holds the newest snapshot of the records under a prefix, fed by an
// etcdstore.ListWatcher, and the health of that feed. Readers call
// Snapshot and never wait; one writer (the ListWatcher's goroutine) calls
// apply and setState.
type Mirror struct {
	prefix  string // without a trailing "/"
	current atomic.Pointer[snapshot.Snapshot]
	metrics mirrorMetrics
	logger  *slog.Logger
	// onSnapshot is called after every publish, from the writer goroutine.
	onSnapshot func(*snapshot.Snapshot)
	// beforePublish is called with every update just before its snapshot
	// is published, from the writer goroutine.
	beforePublish func(prev, next *snapshot.Snapshot, u contract.Update)

	// malformed, listed and building are touched only by the writer
	// goroutine.
	malformed malformedSet
	// listed is set by a full update until the state after it is seen.
	listed bool
	// building is the snapshot of the full list being read (see list).
	building *snapshot.Builder

	mu    sync.Mutex // guards state
	state etcdstore.State

	synced     chan struct{} // closed at the first Synced state
	syncedOnce sync.Once
}

// mirrorMetrics is what a Mirror counts its updates and its feed's health
// in: the daemon's Metrics, or nothing.
type mirrorMetrics interface {
	observeSnapshot(s *snapshot.Snapshot, full bool, events int, took time.Duration)
	observeState(s etcdstore.State)
	observeMalformed(added, now int)
}

// uncounted is the mirrorMetrics of a Mirror without metrics.
type uncounted struct{}

func (uncounted) observeSnapshot(*snapshot.Snapshot, bool, int, time.Duration) {}
func (uncounted) observeState(etcdstore.State)                                 {}
func (uncounted) observeMalformed(int, int)                                    {}

// NewMirror returns a Mirror of prefix holding an empty snapshot, counting
// in metrics, which belong to the caller (nil: nothing is counted).
func NewMirror(prefix string, metrics *Metrics, logger *slog.Logger) *Mirror {
	m := &Mirror{prefix: strings.TrimSuffix(prefix, "/"), logger: logger, metrics: uncounted{}, synced: make(chan struct{})}
	m.setHooks(nil, nil)
	m.current.Store(snapshot.Empty(m.prefix))
	if metrics != nil {
		m.metrics = metrics
	}
	return m
}

// setHooks makes the writer goroutine call beforePublish with every update
// just before its snapshot is published, and onSnapshot after every
// publish; nil for neither. Call it before Run.
func (m *Mirror) setHooks(beforePublish func(prev, next *snapshot.Snapshot, u contract.Update), onSnapshot func(*snapshot.Snapshot)) {
	m.beforePublish, m.onSnapshot = beforePublish, onSnapshot
	if beforePublish == nil {
		m.beforePublish = func(_, _ *snapshot.Snapshot, _ contract.Update) {}
	}
	if onSnapshot == nil {
		m.onSnapshot = func(*snapshot.Snapshot) {}
	}
}

// Snapshot returns the snapshot being served.
func (m *Mirror) Snapshot() *snapshot.Snapshot { return m.current.Load() }

// WatchTiming is how the mirror's list-then-watch loop paces itself (the
// fields of etcdstore.ListWatcher of the same names; zero: their defaults).
type WatchTiming struct {
	RequestTimeout time.Duration
	ProbeInterval  time.Duration
	StallAfter     time.Duration
	RelistJitter   time.Duration
}

// Run mirrors the prefix from src until ctx ends. requestTimeout and
// probeInterval tune the ListWatcher (zero means its default).
func (m *Mirror) Run(ctx context.Context, src etcdstore.Source, timing WatchTiming) error {
	lw := &etcdstore.ListWatcher{
		Source:         src,
		Prefix:         m.prefix + "/", // not "/skydnsfoo"
		RequestTimeout: timing.RequestTimeout,
		ProbeInterval:  timing.ProbeInterval,
		StallAfter:     timing.StallAfter,
		RelistJitter:   timing.RelistJitter,
		OnUpdate:       m.apply,
		OnList:         m.list,
		OnState:        m.setState,
		Logger:         m.logger,
	}
	return lw.Run(ctx)
}

// list starts the snapshot of a full list, built as its keys arrive: a
// list held whole until the end would double the process's memory for a
// moment (its raw values beside the snapshot made of them).
func (m *Mirror) list() func(contract.Event) {
	b := m.Snapshot().NewBuilder()
	m.building = b
	return b.Add
}

// apply publishes the snapshot of one revision; a full update's is the
// one list built.
func (m *Mirror) apply(u contract.Update) {
	start := time.Now()
	prev := m.Snapshot()
	var next *snapshot.Snapshot
	var errs []error
	if u.Full && m.building != nil {
		next, errs = m.building.Build(u.Revision)
		u.Events = m.building.Malformed() // the ones trackMalformed looks at
		m.building = nil
	} else {
		next, errs = prev.Apply(u)
	}
	m.beforePublish(prev, next, u)
	m.current.Store(next)
	took := time.Since(start)
	m.trackMalformed(u, len(errs) > 0)
	m.metrics.observeSnapshot(next, u.Full, len(u.Events), took)
	m.listed = m.listed || u.Full
	m.logger.Debug("snapshot published", "revision", next.Revision(), "records", next.Len(), "events", len(u.Events), "full", u.Full)
	m.onSnapshot(next)
}

// trackMalformed logs and counts the malformed values an update brought
// that were not seen before; a re-list of the same bad value stays quiet.
func (m *Mirror) trackMalformed(u contract.Update, anyBad bool) {
	if !anyBad && len(m.malformed) == 0 {
		return
	}
	added := m.malformed.update(m.prefix, u, anyBad)
	for _, bad := range added {
		m.logger.Warn("skipping malformed record", "key", bad.key, "value", truncate(bad.value, 200), "err", bad.err)
	}
	m.metrics.observeMalformed(len(added), len(m.malformed))
}

func truncate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "..."
}

func (m *Mirror) setState(s etcdstore.State) {
	m.mu.Lock()
	m.state = s
	m.mu.Unlock()
	m.metrics.observeState(s)
	if s.Synced {
		m.syncedOnce.Do(func() { close(m.synced) })
	}
	if m.listed && s.Synced {
		m.listed = false
		m.freeListGarbage()
	}
}

// freeListGarbage collects what a full list left behind (the etcd
// responses, their keys and values, the previous snapshot) and returns the
// memory to the OS. A list holds several times the snapshot's size, and the
// Go heap would otherwise keep room for it until the next GC cycles; this
// costs one GC, once per list. The ListWatcher reports Synced right after
// delivering a list, when the list's events are no longer reachable. It
// also gives back the binary's pages that starting up mapped (see
// exepages): the ones serving needs are mapped again as they run.
func (m *Mirror) freeListGarbage() {
	debug.FreeOSMemory()
	if n, err := exepages.Drop(); err != nil {
		m.logger.Warn("could not give back the binary's resident pages", "err", err)
	} else {
		m.logger.Debug("gave back the binary's resident pages", "mapped_bytes", n)
	}
}

// State returns the health of the feed.
func (m *Mirror) State() etcdstore.State {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.state
}

// StaleSeconds is how long ago etcd last confirmed the snapshot current;
// 0 before the first list.
func (m *Mirror) StaleSeconds() float64 { return staleSeconds(m.State(), time.Now()) }

// Ready returns nil once the prefix has been listed, and an error saying
// why not before. Once listed, the mirror stays ready while etcd is away:
// the last snapshot still answers (Freshness says how old it is).
func (m *Mirror) Ready() error {
	s := m.State()
	switch {
	case !s.Synced && s.Err != nil:
		return fmt.Errorf("not synced: etcd unreachable since %s: %v", s.Since.UTC().Format(time.RFC3339), s.Err)
	case !s.Synced:
		return errors.New("not synced")
	}
	return nil
}

// Synced is closed once the prefix has been listed (Ready is nil from
// then on).
func (m *Mirror) Synced() <-chan struct{} { return m.synced }

// Freshness describes the snapshot served and how current it is known to
// be, for /readyz?verbose.
func (m *Mirror) Freshness(now time.Time) string {
	s, snap := m.State(), m.Snapshot()
	etcd := "etcd reachable"
	if !s.Connected && s.Err != nil {
		etcd = fmt.Sprintf("etcd unreachable since %s: %v", s.Since.UTC().Format(time.RFC3339), s.Err)
	}
	return fmt.Sprintf("snapshot at revision %d, %d records, confirmed current by etcd %.1fs ago; %s",
		snap.Revision(), snap.Len(), staleSeconds(s, now), etcd)
}
