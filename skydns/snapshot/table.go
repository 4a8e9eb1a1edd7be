package snapshot

import (
	"encoding/binary"
	"slices"
	"sort"
	"strings"
)

// table is the snapshot's records in tree-key order: a sorted list of
// leaves, each an immutable string packing a run of consecutive records
// (see leaf), held in groups of at most maxGroupLeaves leaves, so that an
// update copies the list of groups and the groups it changes, not one
// pointer per leaf. It is never changed once made; with returns a new
// table that shares every leaf and group it did not touch.
type table struct {
	groups []leafList // none empty
	n      int        // records
}

// leafList is a sorted run of leaves.
type leafList []*leaf

// Group sizes: a full list makes groups of groupLeaves leaves; an update
// splits a group that grows past maxGroupLeaves.
const (
	groupLeaves    = 64
	maxGroupLeaves = 2 * groupLeaves
)

// Leaf sizes: a full list packs leafRecords records a leaf; an update
// splits a leaf that grows past maxLeafRecords. Bigger leaves share a
// shorter common prefix and cost a longer scan per lookup.
const (
	leafRecords    = 32
	maxLeafRecords = 2 * leafRecords
)

// leaf is a run of records whose keys all start with the same bytes,
// stored once. data is the first key, whole (the table's search reads it),
// the host suffix (the bytes the records' host names end with, stored
// once: see stored), then, for each record in key order, the key's bytes
// after the common prefix and the value, each as a uvarint length and its
// bytes. Every key is longer than the common prefix (see newLeaf), so no
// tail is empty.
type leaf struct {
	data      string
	firstLen  int32
	commonLen int32
	recordsAt int32 // where the records start: after the host suffix
	n         int32 // records
}

func (l *leaf) first() string      { return l.data[:l.firstLen] }
func (l *leaf) common() string     { return l.data[:l.commonLen] }
func (l *leaf) hostSuffix() string { return l.data[l.firstLen:l.recordsAt] }

// at decodes the record at offset off of data: its key's tail, its value
// and the offset of the next record.
func (l *leaf) at(off int) (tail string, v stored, next int) {
	d := unpacker{rest: l.data[off:]}
	tail = d.text()
	v = stored{v: value(d.text()), hostSuffix: l.hostSuffix()}
	return tail, v, len(l.data) - len(d.rest)
}

// minHostSuffix is the shortest host suffix worth sharing.
const minHostSuffix = 4

// newLeaf packs records, which are sorted and unique, into one leaf.
func newLeaf(records []change) *leaf {
	first, last := records[0].key, records[len(records)-1].key
	common := commonPrefixLen(first, last)
	if common == len(first) {
		common-- // first is a prefix of last: keep its tail non-empty
	}
	suffix := commonHostSuffix(records)
	size := len(first) + len(suffix)
	for _, r := range records {
		tail, v := len(r.key)-common, sharedLen(r.v, suffix)
		size += uvarintLen(tail) + tail + uvarintLen(v) + v
	}
	var b strings.Builder
	b.Grow(size)
	b.WriteString(first)
	b.WriteString(suffix)
	var n [binary.MaxVarintLen64]byte
	for _, r := range records {
		b.Write(binary.AppendUvarint(n[:0], uint64(len(r.key)-common)))
		b.WriteString(r.key[common:])
		b.Write(binary.AppendUvarint(n[:0], uint64(sharedLen(r.v, suffix))))
		writeShared(&b, r.v, suffix)
	}
	return &leaf{data: b.String(), firstLen: int32(len(first)), commonLen: int32(common),
		recordsAt: int32(len(first) + len(suffix)), n: int32(len(records))}
}

// commonHostSuffix is the longest suffix every host name of records (not
// an address) ends with, or "" if that is shorter than minHostSuffix.
func commonHostSuffix(records []change) string {
	suffix, any := "", false
	for _, r := range records {
		if !hostIsName(r.v) {
			continue
		}
		_, host, _ := hostField(r.v)
		if !any {
			suffix, any = host, true
			continue
		}
		suffix = suffix[len(suffix)-commonSuffixLen(suffix, host):]
	}
	if len(suffix) < minHostSuffix {
		return ""
	}
	return suffix
}

func commonSuffixLen(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[len(a)-1-i] != b[len(b)-1-i] {
			return i
		}
	}
	return n
}

// records returns the leaf's records with their keys whole, as puts, for
// a merge.
func (l *leaf) records() []change {
	out := make([]change, 0, l.n)
	head := l.common()
	for off := int(l.recordsAt); off < len(l.data); {
		tail, v, next := l.at(off)
		out = append(out, change{record: record{key: head + tail, v: v.whole()}})
		off = next
	}
	return out
}

func commonPrefixLen(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

func uvarintLen(n int) int {
	var b [binary.MaxVarintLen64]byte
	return len(binary.AppendUvarint(b[:0], uint64(n)))
}

// newTable packs records, sorted and unique, leafRecords to a leaf.
func newTable(records []change) *table {
	return &table{groups: appendGroups(nil, appendLeaves(nil, records, leafRecords), groupLeaves), n: len(records)}
}

// appendGroups appends leaves as groups of at most per leaves each, of
// even sizes.
func appendGroups(groups []leafList, leaves leafList, per int) []leafList {
	parts := (len(leaves) + per - 1) / per
	for i := range parts {
		groups = append(groups, leaves[i*len(leaves)/parts:(i+1)*len(leaves)/parts:(i+1)*len(leaves)/parts])
	}
	return groups
}

// appendLeaves appends records, sorted and unique, as leaves of at most
// per records each, of even sizes. It clears records as it packs them, so
// that a full list's records can be collected while its leaves are made.
func appendLeaves(leaves leafList, records []change, per int) leafList {
	if len(records) == 0 {
		return leaves
	}
	parts := (len(records) + per - 1) / per
	for i := range parts {
		part := records[i*len(records)/parts : (i+1)*len(records)/parts]
		leaves = append(leaves, newLeaf(part))
		clear(part)
	}
	return leaves
}

// leafFor is the index of the leaf of ls that holds key or would: the
// last leaf whose first key is at or before key, or the first leaf.
func (ls leafList) leafFor(key string) int {
	i := sort.Search(len(ls), func(i int) bool { return ls[i].first() > key })
	return max(i-1, 0)
}

// groupFor is leafFor for the groups: the group that holds key or would.
func (t *table) groupFor(key string) int {
	i := sort.Search(len(t.groups), func(i int) bool { return t.groups[i][0].first() > key })
	return max(i-1, 0)
}

// change is a put (del false) or a delete of one tree key.
type change struct {
	record
	del bool
}

// with returns a table with changes applied in order; t is not changed.
// Only the leaves the changes fall in are unpacked and packed again, and
// only their groups copied.
func (t *table) with(changes []change) *table {
	if len(t.groups) == 0 {
		return newTable(merge(nil, changes))
	}
	changed := byIndex(changes, t.groupFor)
	out := &table{groups: make([]leafList, 0, len(t.groups)+len(changed)), n: t.n}
	next := 0 // the first group not yet in out
	for _, g := range changed {
		out.groups = append(out.groups, t.groups[next:g.index]...)
		next = g.index + 1
		leaves, added := t.groups[g.index].with(g.changes)
		out.n += added
		per := maxGroupLeaves
		if len(leaves) > maxGroupLeaves {
			per = groupLeaves
		}
		out.groups = appendGroups(out.groups, leaves, per)
	}
	out.groups = append(out.groups, t.groups[next:]...)
	return out
}

// with returns ls with changes applied, all of which fall in ls, and how
// many records that added (negative: removed).
func (ls leafList) with(changes []change) (leafList, int) {
	changed := byIndex(changes, ls.leafFor)
	out := make(leafList, 0, len(ls)+len(changed))
	added := 0
	next := 0 // the first leaf not yet in out
	for _, g := range changed {
		out = append(out, ls[next:g.index]...)
		next = g.index + 1
		records := merge(ls[g.index].records(), g.changes)
		per := maxLeafRecords
		if len(records) > maxLeafRecords {
			per = leafRecords
		}
		added += len(records) - int(ls[g.index].n)
		out = appendLeaves(out, records, per)
	}
	return append(out, ls[next:]...), added
}

// indexedChanges are the changes that fall in one leaf or group, in their
// order.
type indexedChanges struct {
	index   int
	changes []change
}

// byIndex groups changes by the index indexOf gives their keys, in index
// order.
func byIndex(changes []change, indexOf func(key string) int) []indexedChanges {
	var groups []indexedChanges
	at := map[int]int{} // index → its place in groups
	for _, c := range changes {
		i := indexOf(c.key)
		g, ok := at[i]
		if !ok {
			g = len(groups)
			at[i] = g
			groups = append(groups, indexedChanges{index: i})
		}
		groups[g].changes = append(groups[g].changes, c)
	}
	slices.SortFunc(groups, func(a, b indexedChanges) int { return a.index - b.index })
	return groups
}

// merge returns records, sorted and unique puts, with changes applied: of
// several changes to one key the last counts. Without records it reuses
// changes' array.
func merge(records, changes []change) []change {
	changes = latest(changes)
	if len(records) == 0 {
		return slices.DeleteFunc(changes, func(c change) bool { return c.del })
	}
	out := make([]change, 0, len(records)+len(changes))
	for len(records) > 0 || len(changes) > 0 {
		if len(changes) == 0 || len(records) > 0 && records[0].key < changes[0].key {
			out, records = append(out, records[0]), records[1:]
			continue
		}
		if len(records) > 0 && records[0].key == changes[0].key {
			records = records[1:] // replaced or deleted
		}
		if !changes[0].del {
			out = append(out, changes[0])
		}
		changes = changes[1:]
	}
	return out
}

// latest sorts changes by key, keeping only the last change of each key.
func latest(changes []change) []change {
	slices.SortStableFunc(changes, func(a, b change) int { return strings.Compare(a.key, b.key) })
	unique := changes[:0]
	for i, c := range changes {
		if i+1 < len(changes) && changes[i+1].key == c.key {
			continue // a later change of the same key follows
		}
		unique = append(unique, c)
	}
	return unique
}

// walk calls fn, in key order, for every record whose key is at or after
// from, until fn returns true.
func (t *table) walk(from string, fn func(k treeKey, v stored) bool) {
	if len(t.groups) == 0 {
		return
	}
	gi := t.groupFor(from)
	li := t.groups[gi].leafFor(from)
	for ; gi < len(t.groups); gi, li = gi+1, 0 {
		for _, l := range t.groups[gi][li:] {
			if l.walk(from, fn) {
				return
			}
		}
	}
}

// walk is table.walk over one leaf; it returns true where fn did.
func (l *leaf) walk(from string, fn func(k treeKey, v stored) bool) bool {
	head := l.common()
	for off := int(l.recordsAt); off < len(l.data); {
		tail, v, next := l.at(off)
		off = next
		if k := (treeKey{head, tail}); k.compare(from) >= 0 && fn(k, v) {
			return true
		}
	}
	return false
}

// get returns the value stored at key.
func (t *table) get(key string) (stored, bool) {
	var found stored
	ok := false
	t.walk(key, func(k treeKey, v stored) bool {
		if k.compare(key) == 0 {
			found, ok = v, true
		}
		return true
	})
	return found, ok
}

// treeKey is a tree key as a leaf holds it: the leaf's common prefix and
// the rest, two substrings of the leaf, so that reading one copies nothing.
type treeKey struct{ head, tail string }

// compare orders k and s bytewise, as strings.Compare(head+tail, s).
func (k treeKey) compare(s string) int {
	if len(s) <= len(k.head) {
		if c := strings.Compare(k.head[:len(s)], s); c != 0 {
			return c
		}
		if len(k.head)+len(k.tail) == len(s) {
			return 0
		}
		return 1
	}
	if c := strings.Compare(k.head, s[:len(k.head)]); c != 0 {
		return c
	}
	return strings.Compare(k.tail, s[len(k.head):])
}

// hasPrefix reports whether head+tail starts with p.
func (k treeKey) hasPrefix(p string) bool {
	if len(p) <= len(k.head) {
		return k.head[:len(p)] == p
	}
	return k.head == p[:len(k.head)] && strings.HasPrefix(k.tail, p[len(k.head):])
}

// depth is the number of labels: each ends with a "/".
func (k treeKey) depth() int { return strings.Count(k.head, "/") + strings.Count(k.tail, "/") }

// appendTo appends the whole key to dst.
func (k treeKey) appendTo(dst []byte) []byte { return append(append(dst, k.head...), k.tail...) }
