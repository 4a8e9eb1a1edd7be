package source

import "sync"

// lastReport remembers what was last reported of an object, so that a
// problem is logged when it changes, not on every full reconcile.
type lastReport struct {
	mu   sync.Mutex
	last string
}

// changed reports whether report differs from the last one, and makes it
// the last.
func (r *lastReport) changed(report string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if report == r.last {
		return false
	}
	r.last = report
	return true
}
