package fastpath

import "strings"

// Refresh brings the cache to the source's version, if it changed: the
// answers made from names the new version changed (at or below them) are
// dropped, and so are volatile ones; when the changes are not known,
// everything is. Call it before each batch of queries.
func (c *Cache) Refresh() {
	v := c.cfg.Answers.Version()
	if v == c.version {
		return
	}
	names, known := c.cfg.Changes.since(c.version, v)
	c.version = v
	if !known {
		c.reset()
		return
	}
	c.drop(c.volatile)
	c.refs -= len(c.volatile)
	c.volatile = c.volatile[:0]
	for _, n := range names {
		c.dropUnder(n)
	}
}

// dropUnder drops the entries made from name or from any name above it:
// a record at name is also at or below each of those.
func (c *Cache) dropUnder(name string) {
	for n := strings.ToLower(name); ; n = parentName(n) {
		if keys, ok := c.deps[n]; ok {
			c.drop(keys)
			c.refs -= len(keys)
			delete(c.deps, n)
		}
		if n == "." {
			return
		}
	}
}

// drop deletes the entries under keys. A key may be listed under a name
// its entry no longer depends on (it was dropped and filled again): that
// only costs a fill.
func (c *Cache) drop(keys []string) {
	for _, k := range keys {
		delete(c.entries, k)
	}
}

// reset empties the cache.
func (c *Cache) reset() {
	if c.entries == nil {
		c.entries, c.deps = map[string]entry{}, map[string][]string{}
	}
	clear(c.entries)
	clear(c.deps)
	c.volatile, c.refs = c.volatile[:0], 0
}

// parentName removes the first label of a fully qualified name; the
// parent of a top-level name is the root, ".".
func parentName(name string) string {
	i := strings.IndexByte(name, '.')
	if i < 0 || i == len(name)-1 {
		return "."
	}
	return name[i+1:]
}
