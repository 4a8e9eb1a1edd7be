package forward

import "sync"

// limiter bounds the queries in flight to each upstream. A zero max means
// no bound, and then it keeps no count at all.
type limiter struct {
	max int

	mu       sync.Mutex
	inFlight map[string]int // guarded by mu; addr -> queries in flight
}

func newLimiter(maxPerUpstream int) *limiter {
	return &limiter{max: maxPerUpstream, inFlight: map[string]int{}}
}

// acquire takes a slot at addr; false means addr is at its limit.
func (l *limiter) acquire(addr string) bool {
	if l.max == 0 {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inFlight[addr] >= l.max {
		return false
	}
	l.inFlight[addr]++
	return true
}

// release gives back a slot acquire took.
func (l *limiter) release(addr string) {
	if l.max == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inFlight[addr]--; l.inFlight[addr] == 0 {
		delete(l.inFlight, addr)
	}
}
