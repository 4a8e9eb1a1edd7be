package fastpath

import (
	"net/netip"
	"sync"
)

// perSourceQueue is how many of the fallbackQueue places the queries of one
// client IP may hold.
const perSourceQueue = fallbackQueue / 4

// fairQueue holds the queries waiting for the ordinary path, one FIFO per
// client IP, taken round robin. A client that floods the ordinary path
// (with names the fast path cannot answer, or malformed queries) fills
// only its own FIFO: another client's query waits behind at most one query
// of each other client, and is refused a place only when the queue as a
// whole is full.
type fairQueue struct {
	mu       sync.Mutex
	bySource map[netip.Addr]*sourceQueue
	turns    []*sourceQueue // the sources with queries, in the order they are served
	total    int
	ready    chan struct{} // signalled when a query is added
}

// sourceQueue is the FIFO of one client IP.
type sourceQueue struct {
	source  netip.Addr
	packets []packet
}

func newFairQueue() *fairQueue {
	return &fairQueue{bySource: make(map[netip.Addr]*sourceQueue), ready: make(chan struct{}, 1)}
}

// push queues p from source; false when its FIFO or the queue is full.
func (f *fairQueue) push(source netip.Addr, p packet) bool {
	f.mu.Lock()
	q := f.bySource[source]
	if f.total >= fallbackQueue || q != nil && len(q.packets) >= perSourceQueue {
		f.mu.Unlock()
		return false
	}
	if q == nil {
		q = &sourceQueue{source: source}
		f.bySource[source] = q
		f.turns = append(f.turns, q)
	}
	q.packets = append(q.packets, p)
	f.total++
	f.mu.Unlock()
	select {
	case f.ready <- struct{}{}:
	default:
	}
	return true
}

// pop takes the oldest query of the source whose turn it is; false when
// the queue is empty.
func (f *fairQueue) pop() (packet, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.turns) == 0 {
		return packet{}, false
	}
	q := f.turns[0]
	f.turns = f.turns[1:]
	p := q.packets[0]
	q.packets[0] = packet{}
	q.packets = q.packets[1:]
	f.total--
	if len(q.packets) > 0 {
		f.turns = append(f.turns, q)
	} else {
		delete(f.bySource, q.source)
	}
	return p, true
}

// len is how many queries wait.
func (f *fairQueue) len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.total
}
