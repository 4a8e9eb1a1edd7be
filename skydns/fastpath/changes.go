package fastpath

import "sync"

// changesKept is how many versions a Changes remembers; a cache further
// behind than that drops everything.
const changesKept = 64

// Changes remembers which names each new version changed, so that caches
// keep the answers a change did not touch instead of dropping them all.
// It is written by one goroutine (the one publishing versions) and read by
// the caches when they see a new version.
type Changes struct {
	mu  sync.Mutex // guards log and n
	log [changesKept]change
	n   int // changes recorded so far; the newest is log[(n-1)%changesKept]
}

// change is one version's difference from the one before.
type change struct {
	prev, version uint64
	names         []string
	full          bool
}

// NewChanges returns an empty log.
func NewChanges() *Changes { return &Changes{} }

// Record notes that version follows prev and changed the records at the
// given names (lower case, fully qualified); full means anything may have
// changed. Record it before Source.Version can report version.
func (c *Changes) Record(prev, version uint64, names []string, full bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.log[c.n%changesKept] = change{prev: prev, version: version, names: names, full: full}
	c.n++
}

// since returns every name changed on the way from version from to version
// to. ok is false when the way is not known: not recorded, forgotten, or
// through a full change.
func (c *Changes) since(from, to uint64) (names []string, ok bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := c.n - 1; i >= 0 && i >= c.n-changesKept; i-- {
		ch := &c.log[i%changesKept]
		if ch.version != to {
			continue
		}
		if ch.full {
			return nil, false
		}
		names, to = append(names, ch.names...), ch.prev
		if to == from {
			return names, true
		}
	}
	return nil, false
}
