package snapshot

import (
	"bytes"
	"strings"
	"sync"
)

// Lookup returns every record at or below name's key, SkyDNS style: the
// record at the name's own key and every record under it. A "*" or "any"
// label in name matches exactly one label. Names are matched without regard
// to ASCII case. Entries come in key order, which is stable for a given
// snapshot. A name that cannot be a key (a label containing "/" or a
// backslash escape, or an empty label) has no records.
func (s *Snapshot) Lookup(name string) []Entry {
	return s.AppendLookup(nil, name)
}

// AppendLookup is Lookup appending to dst, for callers that reuse a buffer.
func (s *Snapshot) AppendLookup(dst []Entry, name string) []Entry {
	q, ok := newQuery(name)
	if !ok {
		return dst
	}
	defer q.release()
	s.walkPrefix(q.literal(), func(k treeKey, v stored) bool {
		if q.matches(k) {
			dst = append(dst, s.entry(k, v))
		}
		return false
	})
	return dst
}

// Exact returns only the records at name's own key (PTR answers use it).
// Wildcard labels match one label; nothing below the name is returned.
func (s *Snapshot) Exact(name string) []Entry {
	return s.AppendExact(nil, name)
}

// AppendExact is Exact appending to dst, for callers that reuse a buffer.
func (s *Snapshot) AppendExact(dst []Entry, name string) []Entry {
	q, ok := newQuery(name)
	if !ok {
		return dst
	}
	defer q.release()
	if !q.star {
		// The entry keeps the key: a string of its own, not q.key, which
		// goes back to the pool.
		k := string(q.key)
		if v, found := s.records.get(k); found {
			dst = append(dst, s.entry(treeKey{tail: k}, v))
		}
		return dst
	}
	depth := bytes.Count(q.key, slash)
	s.walkPrefix(q.literal(), func(k treeKey, v stored) bool {
		if q.matches(k) && k.depth() == depth {
			dst = append(dst, s.entry(k, v))
		}
		return false
	})
	return dst
}

// Exists reports whether any record lives at or below name's key. It is
// true for an empty non-terminal (a name with records only below it), which
// answers NODATA rather than NXDOMAIN.
func (s *Snapshot) Exists(name string) bool {
	q, ok := newQuery(name)
	if !ok {
		return false
	}
	defer q.release()
	found := false
	s.walkPrefix(q.literal(), func(k treeKey, _ stored) bool {
		found = q.matches(k)
		return found // stops the walk
	})
	return found
}

// walkPrefix calls fn, in key order, for every record whose tree key starts
// with prefix, until fn returns true. Keys sharing a prefix are next to
// each other in the tree's order, so the walk seeks to the first and stops
// at the first that does not share it.
func (s *Snapshot) walkPrefix(prefix []byte, fn func(k treeKey, v stored) bool) {
	p := string(prefix)
	s.records.walk(p, func(k treeKey, v stored) bool {
		return !k.hasPrefix(p) || fn(k, v)
	})
}

var slash = []byte{'/'}

// query is a name turned into a tree key (see the package doc).
type query struct {
	key     []byte // every label, reversed, lower case, each followed by "/"
	litLen  int    // length of key before the first wildcard label
	star    bool   // key holds a wildcard label
	pooledB *[]byte
}

var keyPool = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

func newQuery(name string) (query, bool) {
	buf := keyPool.Get().(*[]byte)
	q := query{pooledB: buf}
	key, ok := q.appendKey((*buf)[:0], name)
	q.key = key
	if !ok {
		q.release()
		return query{}, false
	}
	if !q.star {
		q.litLen = len(key)
	}
	return q, true
}

func (q *query) release() {
	if q.pooledB != nil && cap(q.key) <= 4096 {
		*q.pooledB = q.key[:0]
		keyPool.Put(q.pooledB)
	}
	q.pooledB = nil
}

// appendKey appends name's labels to dst from the last to the first.
func (q *query) appendKey(dst []byte, name string) (_ []byte, ok bool) {
	name = strings.TrimSuffix(name, ".")
	if name == "" {
		return dst, true
	}
	for end := len(name); end >= 0; {
		start := strings.LastIndexByte(name[:end], '.') + 1
		label := name[start:end]
		if label == "" {
			return dst, false
		}
		if !q.star && isWildcard(label) {
			q.star, q.litLen = true, len(dst)
		}
		if dst, ok = appendLabel(dst, label); !ok {
			return dst, false
		}
		end = start - 1
	}
	return dst, true
}

func (q *query) literal() []byte { return q.key[:q.litLen] }

// matches reports whether tree key k is at or below the query's key, a
// wildcard label matching any one label of k.
func (q *query) matches(tk treeKey) bool {
	if !q.star {
		return tk.hasPrefix(string(q.key))
	}
	var buf [256]byte
	k := tk.appendTo(buf[:0])
	p := q.key
	for len(p) > 0 {
		pi, ki := bytes.IndexByte(p, '/'), bytes.IndexByte(k, '/')
		if ki < 0 {
			return false
		}
		if seg := p[:pi]; !isWildcardBytes(seg) && !bytes.Equal(seg, k[:ki]) {
			return false
		}
		p, k = p[pi+1:], k[ki+1:]
	}
	return true
}

// appendLabel appends a label in lower case and a "/". A label holding a
// "/" or an escape ("\.") cannot be a key segment: it returns false.
func appendLabel(dst []byte, label string) ([]byte, bool) {
	for i := 0; i < len(label); i++ {
		c := label[i]
		switch {
		case c == '/' || c == '\\':
			return dst, false
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return append(dst, '/'), true
}

func isWildcard(label string) bool {
	return label == "*" || strings.EqualFold(label, "any")
}

func isWildcardBytes(seg []byte) bool {
	return string(seg) == "*" || string(seg) == "any"
}
