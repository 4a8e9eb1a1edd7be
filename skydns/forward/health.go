package forward

import (
	"slices"
	"sync"
	"time"
)

// failureHold is how long an upstream that failed is tried only after the
// healthy ones.
const failureHold = 10 * time.Second

// health remembers which upstreams failed recently. One health serves every
// upstream set, so a server shared by a stub domain and --upstream, or kept
// across SetStubs calls, keeps its record.
type health struct {
	now func() time.Time

	mu          sync.Mutex
	failedUntil map[string]time.Time // guarded by mu; addr -> end of its hold
	probing     map[string]bool      // guarded by mu; addrs with a probe running
	probeFailed map[string]bool      // guarded by mu; addrs whose health check failed since they last answered
}

func newHealth(now func() time.Time) *health {
	return &health{now: now, failedUntil: map[string]time.Time{}, probing: map[string]bool{}, probeFailed: map[string]bool{}}
}

// allDown reports whether every one of addrs is held failed and has
// failed a health check since it last answered: an outage, not one lost
// reply.
func (h *health) allDown(addrs []string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	for _, a := range addrs {
		if !h.failedUntil[a].After(now) || !h.probeFailed[a] {
			return false
		}
	}
	return len(addrs) > 0
}

// probeFailure records a failed health check of addr.
func (h *health) probeFailure(addr string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.probeFailed[addr] = true
}

// held reports whether addr is held failed now.
func (h *health) held(addr string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.failedUntil[addr].After(h.now())
}

// allHeld reports whether every one of addrs is held failed now.
func (h *health) allHeld(addrs []string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	for _, a := range addrs {
		if !h.failedUntil[a].After(now) {
			return false
		}
	}
	return len(addrs) > 0
}

// startProbe claims the probe of addr; false means one runs already.
func (h *health) startProbe(addr string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.probing[addr] {
		return false
	}
	h.probing[addr] = true
	return true
}

func (h *health) endProbe(addr string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.probing, addr)
}

// failed records a failure of addr; it reports whether addr was healthy.
func (h *health) failed(addr string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	wasHealthy := !h.failedUntil[addr].After(now)
	h.failedUntil[addr] = now.Add(failureHold)
	return wasHealthy
}

// ok records an answer from addr; it reports whether addr was held failed.
func (h *health) ok(addr string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, held := h.failedUntil[addr]
	delete(h.failedUntil, addr)
	delete(h.probeFailed, addr)
	return held
}

// order returns addrs in the order to try them: the healthy ones in turn,
// starting at the turn-th, then the failed ones, soonest recovery first.
func (h *health) order(addrs []string, turn uint64) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	var healthy, failed []string
	for _, a := range addrs {
		if h.failedUntil[a].After(now) {
			failed = append(failed, a)
		} else {
			healthy = append(healthy, a)
		}
	}
	if n := len(healthy); n > 1 {
		k := int(turn % uint64(n))
		healthy = slices.Concat(healthy[k:], healthy[:k])
	}
	slices.SortFunc(failed, func(a, b string) int {
		return h.failedUntil[a].Compare(h.failedUntil[b])
	})
	return append(healthy, failed...)
}
