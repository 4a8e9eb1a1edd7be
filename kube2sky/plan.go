package kube2sky

import (
	"bytes"
	"cmp"
	"iter"
	"slices"

	"github.com/kubesky/kubesky/kube2sky/records"
)

// desiredKV is one desired key with its encoded value.
type desiredKV struct {
	key   string
	value []byte
	// current is set when etcd is known to hold value at key already (a
	// full reconcile marks these instead of keeping what it listed).
	current bool
}

func encodeEntries(entries []records.Entry) []desiredKV {
	out := make([]desiredKV, len(entries))
	for i, e := range entries {
		out[i] = desiredKV{key: e.Key, value: e.Record.Encode()}
	}
	return out
}

// planResult is the difference between a desired set and what etcd holds.
type planResult struct {
	changes []change
	// foreign counts desired keys held by a record someone else owns.
	foreign int
}

// plan returns the changes that turn cur into want: puts for missing or
// different owned keys, deletes for owned keys not wanted. Keys owned by
// someone else are never touched. Changes come sorted by key.
func plan(owner string, want []desiredKV, cur current) planResult {
	var r planResult
	if len(cur) == 0 { // nothing to delete or compare: every pending key is a put
		r.changes = make([]change, 0, pending(want))
	}
	for _, d := range want {
		if d.current {
			continue
		}
		old, ok := cur[d.key]
		switch {
		case !ok:
			r.changes = append(r.changes, change{key: d.key, value: d.value})
		case bytes.Equal(old.value, d.value):
		case old.owner != owner:
			r.foreign++
		default:
			r.changes = append(r.changes, change{key: d.key, value: d.value, modRev: old.modRev})
		}
	}
	if len(cur) > 0 {
		r.changes = append(r.changes, deletes(owner, want, cur)...)
	}
	slices.SortFunc(r.changes, func(a, b change) int { return cmp.Compare(a.key, b.key) })
	return r
}

// pending counts the desired keys not known to be current.
func pending(want []desiredKV) int {
	n := 0
	for _, d := range want {
		if !d.current {
			n++
		}
	}
	return n
}

// deletes returns the deletes of owned keys in cur that want does not hold.
func deletes(owner string, want []desiredKV, cur current) []change {
	wanted := make(map[string]struct{}, len(want))
	for _, d := range want {
		wanted[d.key] = struct{}{}
	}
	var out []change
	for key, old := range cur {
		if _, ok := wanted[key]; !ok && old.owner == owner {
			out = append(out, change{key: key, modRev: old.modRev})
		}
	}
	return out
}

// batches splits one Service's changes into Txns of at most size changes:
// one Txn when they fit, else all puts before any delete, so a reader never
// sees the Service with fewer records than either the old or the new set.
func batches(changes []change, size int) [][]change {
	if len(changes) <= size {
		return [][]change{changes}
	}
	ordered := make([]change, 0, len(changes))
	for _, c := range changes {
		if c.value != nil {
			ordered = append(ordered, c)
		}
	}
	for _, c := range changes {
		if c.value == nil {
			ordered = append(ordered, c)
		}
	}
	return slices.Collect(slices.Chunk(ordered, size))
}

// serviceChanges is the changes of one Service in a full reconcile.
type serviceChanges struct {
	key     groupKey
	changes []change
}

// packedBatch is one Txn of a full reconcile and the Services it touches.
type packedBatch struct {
	changes  []change
	services []groupKey
}

// pack puts the changes of many Services into as few Txns as possible,
// keeping each Service's changes in one Txn when they fit in one. It reads
// the groups as it goes and yields each Txn as soon as it is full, so a
// full reconcile never holds every change at once.
func pack(groups iter.Seq[serviceChanges], size int) iter.Seq[packedBatch] {
	return func(yield func(packedBatch) bool) {
		var cur packedBatch
		flush := func() bool {
			if len(cur.changes) == 0 {
				return true
			}
			full := cur
			cur = packedBatch{}
			return yield(full)
		}
		for g := range groups {
			if len(g.changes) > size {
				if !flush() {
					return
				}
				for _, b := range batches(g.changes, size) {
					if !yield(packedBatch{changes: b, services: []groupKey{g.key}}) {
						return
					}
				}
				continue
			}
			if len(cur.changes)+len(g.changes) > size && !flush() {
				return
			}
			cur.changes = append(cur.changes, g.changes...)
			cur.services = append(cur.services, g.key)
		}
		flush()
	}
}
