package fastpath

import (
	"hash/maphash"
	"strings"
	"time"
)

// Refresh brings the cache's store to the source's version, if it
// changed: the answers made from names the new version changed (at or
// below them) are dropped, and so are volatile ones; when the changes are
// not known, everything is. Call it before each batch of queries; with a
// shared store the first Cache to see a new version does the work. It also
// reads the clock that answers' expiries are checked against.
func (c *Cache) Refresh() {
	now := time.Now()
	c.now, c.nanos = now.Unix(), now.UnixNano()
	if c.recursive != nil {
		c.generation = c.recursive.Generation()
	}
	v := c.cfg.Source.Version()
	c.forgetPods(v)
	if v == c.store.seen.Load() {
		return
	}
	c.store.refresh(v, c.cfg.Changes)
}

func (s *Store) refresh(v uint64, changes *Changes) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v == s.version {
		return
	}
	names, known := changes.since(s.version, v)
	s.version = v
	s.seen.Store(v)
	if !known {
		s.reset()
		return
	}
	s.drop(s.volatile)
	s.refs -= len(s.volatile)
	s.volatile = s.volatile[:0]
	for _, n := range names {
		s.dropUnder(n)
	}
}

// dropUnder drops the entries made from name or from any name above it:
// a record at name is also at or below each of those.
func (s *Store) dropUnder(name string) {
	for n := strings.ToLower(name); ; n = parentName(n) {
		h := s.nameHash(n)
		if keys, ok := s.deps[h]; ok {
			s.drop(keys)
			s.refs -= len(keys)
			delete(s.deps, h)
		}
		if n == "." {
			return
		}
	}
}

// drop deletes the entries under keys. A key may be listed under a name
// its entry no longer depends on (it was dropped and filled again): that
// only costs a fill.
func (s *Store) drop(keys []string) {
	for _, k := range keys {
		delete(s.entries, k)
	}
}

// reset empties the store.
func (s *Store) reset() {
	if s.entries == nil {
		s.entries, s.deps = map[string]entry{}, map[uint64][]string{}
	}
	clear(s.entries)
	clear(s.deps)
	s.volatile, s.refs = s.volatile[:0], 0
}

// nameHash is what deps are indexed by: a hash rather than the name
// saves a copy of every name. Two names with one hash only make a change
// of either drop the answers of both.
func (s *Store) nameHash(name string) uint64 { return maphash.String(s.seed, name) }

// parentName removes the first label of a fully qualified name; the
// parent of a top-level name is the root, ".".
func parentName(name string) string {
	i := strings.IndexByte(name, '.')
	if i < 0 || i == len(name)-1 {
		return "."
	}
	return name[i+1:]
}
