package kube2sky

import (
	"sync"
	"time"

	"github.com/kubesky/kubesky/kube2sky/group"
)

// triggers remembers, per group, the earliest change not yet written to
// etcd, for the DNS programming latency.
type triggers struct {
	mu      sync.Mutex
	pending map[group.Key]time.Time
}

func newTriggers() *triggers { return &triggers{pending: map[group.Key]time.Time{}} }

// add records a change at t, keeping the earliest pending one.
func (tr *triggers) add(key group.Key, t time.Time) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if old, ok := tr.pending[key]; !ok || t.Before(old) {
		tr.pending[key] = t
	}
}

// take removes and returns the pending change time (zero when none).
func (tr *triggers) take(key group.Key) time.Time {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	t := tr.pending[key]
	delete(tr.pending, key)
	return t
}
