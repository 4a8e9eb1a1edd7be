package kube2sky

import (
	"sync"
	"time"
)

// triggers remembers, per group, the earliest change not yet written to
// etcd, for the DNS programming latency.
type triggers struct {
	mu      sync.Mutex
	pending map[groupKey]time.Time
}

func newTriggers() *triggers { return &triggers{pending: map[groupKey]time.Time{}} }

// add records a change at t, keeping the earliest pending one.
func (tr *triggers) add(key groupKey, t time.Time) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if old, ok := tr.pending[key]; !ok || t.Before(old) {
		tr.pending[key] = t
	}
}

// take removes and returns the pending change time (zero when none).
func (tr *triggers) take(key groupKey) time.Time {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	t := tr.pending[key]
	delete(tr.pending, key)
	return t
}
