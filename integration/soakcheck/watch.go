package soakcheck

import (
	"fmt"
	"slices"
)

// Applied is one update a skydns applied: a full list at a revision, or
// the events of one watched revision.
type Applied struct {
	Revision int64
	Full     bool
}

// History is the sorted set of revisions that touched the watched prefix,
// as etcd recorded them.
type History struct {
	revisions []int64
}

// NewHistory returns the history of the given revisions, in any order.
func NewHistory(revisions []int64) History {
	revs := slices.Clone(revisions)
	slices.Sort(revs)
	return History{revisions: slices.Compact(revs)}
}

// Len returns how many revisions touched the prefix.
func (h History) Len() int { return len(h.revisions) }

// Last returns the latest revision that touched the prefix, or 0.
func (h History) Last() int64 {
	if len(h.revisions) == 0 {
		return 0
	}
	return h.revisions[len(h.revisions)-1]
}

// has reports whether revision touched the prefix.
func (h History) has(revision int64) bool {
	_, found := slices.BinarySearch(h.revisions, revision)
	return found
}

// between returns the revisions that touched the prefix strictly after lo
// and strictly before hi.
func (h History) between(lo, hi int64) []int64 {
	from, _ := slices.BinarySearch(h.revisions, lo+1)
	to, _ := slices.BinarySearch(h.revisions, hi)
	if from >= to {
		return nil
	}
	return h.revisions[from:to]
}

// CheckRun returns every break of the watch guarantees in the updates one
// skydns process applied, in order: a watched revision before any list,
// not above the one before it (a duplicate, one out of order, or one a
// re-list already held), absent from the history, or skipping revisions
// of the history (a gap); and a re-list that went back.
func CheckRun(applied []Applied, h History) []string {
	var problems []string
	for i, u := range applied {
		if i == 0 {
			if !u.Full {
				problems = append(problems, fmt.Sprintf("watched revision %d applied before any list", u.Revision))
			}
			continue
		}
		problems = append(problems, checkStep(applied[i-1], u, h)...)
	}
	return problems
}

// checkStep judges update u applied right after prev.
func checkStep(prev, u Applied, h History) []string {
	switch {
	case u.Full && u.Revision < prev.Revision:
		return []string{fmt.Sprintf("re-list at revision %d went back behind %d", u.Revision, prev.Revision)}
	case u.Full:
		return nil
	case u.Revision == prev.Revision && !prev.Full:
		return []string{fmt.Sprintf("revision %d applied twice", u.Revision)}
	case u.Revision <= prev.Revision && prev.Full:
		return []string{fmt.Sprintf("revision %d watched after a re-list at %d that already held it", u.Revision, prev.Revision)}
	case u.Revision < prev.Revision:
		return []string{fmt.Sprintf("revision %d applied after %d: out of order", u.Revision, prev.Revision)}
	}
	var problems []string
	if !h.has(u.Revision) {
		problems = append(problems, fmt.Sprintf("revision %d applied, but etcd's history of the prefix has no such revision", u.Revision))
	}
	if missed := h.between(prev.Revision, u.Revision); len(missed) > 0 {
		problems = append(problems, fmt.Sprintf("gap: %d revisions of the prefix skipped between %d and %d (first %d)",
			len(missed), prev.Revision, u.Revision, missed[0]))
	}
	return problems
}
