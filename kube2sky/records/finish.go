package records

import (
	"cmp"
	"slices"
	"strings"
)

// finish sorts entries by key and resolves keys claimed more than once: equal
// values collapse into one; different values at a forward key each move one
// level down, to <key>/<hash of the value>; at a PTR key (an exact name) the
// smallest target wins.
func (z Zone) finish(entries []Entry) []Entry {
	slices.SortFunc(entries, compareEntries)
	entries = slices.CompactFunc(entries, func(a, b Entry) bool { return a == b })
	if !hasSharedKey(entries) {
		return entries
	}
	out := make([]Entry, 0, len(entries)+1)
	for i := 0; i < len(entries); {
		j := i + 1
		for j < len(entries) && entries[j].Key == entries[i].Key {
			j++
		}
		out = z.appendResolved(out, entries[i:j])
		i = j
	}
	slices.SortFunc(out, compareEntries)
	return out
}

func hasSharedKey(sorted []Entry) bool {
	for i := 1; i < len(sorted); i++ {
		if sorted[i].Key == sorted[i-1].Key {
			return true
		}
	}
	return false
}

func compareEntries(a, b Entry) int {
	return cmp.Or(
		strings.Compare(a.Key, b.Key),
		strings.Compare(a.Record.Host, b.Record.Host),
		cmp.Compare(a.Record.Port, b.Record.Port),
	)
}

// appendResolved appends the entries that share one key, sorted by value.
func (z Zone) appendResolved(out, same []Entry) []Entry {
	if len(same) == 1 || z.IsReverseKey(same[0].Key) {
		return append(out, same[0])
	}
	for _, e := range same {
		e.Key += "/" + HashLabel(e.Record.Host, e.Record.Port)
		out = append(out, e)
	}
	return out
}
