package main

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// tracker times the fan-out of each churn revision: when its Txn
// committed, and when the last reader applied it.
type tracker struct {
	mu      sync.Mutex
	base    int64 // the revision of slot 0
	slots   []slot
	exclude atomic.Int64 // a reader id left out (the slow one), or -1
}

type slot struct {
	committed atomic.Int64 // unix nanos, when the writer saw the commit
	count     atomic.Int64 // readers that applied it
	last      atomic.Int64 // unix nanos, the latest apply
}

func newTracker() *tracker {
	t := &tracker{}
	t.exclude.Store(-1)
	return t
}

// window makes the tracker time revisions from base for n revisions,
// forgetting the previous window.
func (t *tracker) window(base int64, n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.base, t.slots = base, make([]slot, n)
}

func (t *tracker) slot(rev int64) *slot {
	t.mu.Lock()
	defer t.mu.Unlock()
	i := rev - t.base
	if i < 0 || i >= int64(len(t.slots)) {
		return nil
	}
	return &t.slots[i]
}

func (t *tracker) committed(rev int64, at time.Time) {
	if s := t.slot(rev); s != nil {
		s.committed.Store(at.UnixNano())
	}
}

func (t *tracker) applied(reader int, rev int64, at time.Time) {
	if int64(reader) == t.exclude.Load() {
		return
	}
	s := t.slot(rev)
	if s == nil {
		return
	}
	s.count.Add(1)
	for ns := at.UnixNano(); ; {
		old := s.last.Load()
		if old >= ns || s.last.CompareAndSwap(old, ns) {
			return
		}
	}
}

// fanOut returns, for every committed revision that all want readers
// applied, commit → last apply; and how many committed revisions some
// reader never applied.
func (t *tracker) fanOut(want int64) (lat []time.Duration, missed int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := range t.slots {
		s := &t.slots[i]
		if s.committed.Load() == 0 {
			continue
		}
		if s.count.Load() < want {
			missed++
			continue
		}
		lat = append(lat, max(0, time.Duration(s.last.Load()-s.committed.Load())))
	}
	slices.Sort(lat)
	return lat, missed
}

// percentile returns the p-th percentile (0..100) of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * p / 100)
	return sorted[i]
}
