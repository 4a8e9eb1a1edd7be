package plan

import (
	"bytes"
	"cmp"
	"iter"
	"slices"

	"github.com/kubesky/kubesky/kube2sky/group"
	"github.com/kubesky/kubesky/kube2sky/records"
)

// Want is one desired key with its encoded value.
type Want struct {
	Key   string
	Value []byte
	// Current is set when etcd is known to hold value at key already (a
	// full reconcile marks these instead of keeping what it listed).
	Current bool
}

// Encode encodes entries as desired keys.
func Encode(entries []records.Entry) []Want {
	out := make([]Want, len(entries))
	for i, e := range entries {
		out[i] = Want{Key: e.Key, Value: e.Record.Encode()}
	}
	return out
}

// Result is the difference between a desired set and what etcd holds.
type Result struct {
	Changes []Change
	// Foreign counts desired keys held by a record someone else owns.
	Foreign int
}

// Diff returns the changes that turn cur into want: puts for missing or
// different owned keys, deletes for owned keys not wanted. Keys owned by
// someone else are never touched. Changes come sorted by key.
func Diff(owner string, want []Want, cur Current) Result {
	var r Result
	if len(cur) == 0 { // nothing to delete or compare: every pending key is a put
		r.Changes = make([]Change, 0, pending(want))
	}
	for _, d := range want {
		if d.Current {
			continue
		}
		old, ok := cur[d.Key]
		switch {
		case !ok:
			r.Changes = append(r.Changes, Change{Key: d.Key, Value: d.Value})
		case bytes.Equal(old.Value, d.Value):
		case old.Owner != owner:
			r.Foreign++
		default:
			r.Changes = append(r.Changes, Change{Key: d.Key, Value: d.Value, ModRev: old.ModRev})
		}
	}
	if len(cur) > 0 {
		r.Changes = append(r.Changes, deletes(owner, want, cur)...)
	}
	slices.SortFunc(r.Changes, func(a, b Change) int { return cmp.Compare(a.Key, b.Key) })
	return r
}

// pending counts the desired keys not known to be current.
func pending(want []Want) int {
	n := 0
	for _, d := range want {
		if !d.Current {
			n++
		}
	}
	return n
}

// deletes returns the deletes of owned keys in cur that want does not hold.
func deletes(owner string, want []Want, cur Current) []Change {
	wanted := make(map[string]struct{}, len(want))
	for _, d := range want {
		wanted[d.Key] = struct{}{}
	}
	var out []Change
	for key, old := range cur {
		if _, ok := wanted[key]; !ok && old.Owner == owner {
			out = append(out, Change{Key: key, ModRev: old.ModRev})
		}
	}
	return out
}

// Batches splits one group's changes into Txns of at most size changes:
// one Txn when they fit, else all puts before any delete, so a reader never
// sees the group with fewer records than either the old or the new set.
func Batches(changes []Change, size int) [][]Change {
	if len(changes) <= size {
		return [][]Change{changes}
	}
	ordered := make([]Change, 0, len(changes))
	for _, c := range changes {
		if c.Value != nil {
			ordered = append(ordered, c)
		}
	}
	for _, c := range changes {
		if c.Value == nil {
			ordered = append(ordered, c)
		}
	}
	return slices.Collect(slices.Chunk(ordered, size))
}

// GroupChanges is the changes of one group in a full reconcile.
type GroupChanges struct {
	Key     group.Key
	Changes []Change
}

// Batch is one Txn of a full reconcile and the groups it touches.
type Batch struct {
	Changes []Change
	Groups  []group.Key
}

// Pack puts the changes of many groups into as few Txns as possible,
// keeping each group's changes in one Txn when they fit in one. It reads
// the groups as it goes and yields each Txn as soon as it is full, so a
// full reconcile never holds every change at once.
func Pack(groups iter.Seq[GroupChanges], size int) iter.Seq[Batch] {
	return func(yield func(Batch) bool) {
		var cur Batch
		flush := func() bool {
			if len(cur.Changes) == 0 {
				return true
			}
			full := cur
			cur = Batch{}
			return yield(full)
		}
		for g := range groups {
			if len(g.Changes) > size {
				if !flush() {
					return
				}
				for _, b := range Batches(g.Changes, size) {
					if !yield(Batch{Changes: b, Groups: []group.Key{g.Key}}) {
						return
					}
				}
				continue
			}
			if len(cur.Changes)+len(g.Changes) > size && !flush() {
				return
			}
			cur.Changes = append(cur.Changes, g.Changes...)
			cur.Groups = append(cur.Groups, g.Key)
		}
		flush()
	}
}
