package snapshot

import (
	"fmt"
	"testing"
)

// TestUpdatesKeepTheTableInShape: after a full list and updates that grow
// one place by thousands of keys and then empty it, every group holds 1 to
// maxGroupLeaves leaves, every leaf 1 to maxLeafRecords records, keys
// ascend across leaves and groups, and the count is right.
func TestUpdatesKeepTheTableInShape(t *testing.T) {
	var list []change
	for i := range 5000 {
		list = append(list, change{record: record{key: fmt.Sprintf("a/%05d/", i*2), v: "\x00\x1e\x00\x00\x00\x00\x00\x00\x00"}})
	}
	tab := newTable(merge(nil, list))
	checkShape(t, "the full list", tab, 5000)
	var grow []change
	for i := range 9000 {
		grow = append(grow, change{record: record{key: fmt.Sprintf("a/04999/%05d/", i), v: "\x00\x1e\x00\x00\x00\x00\x00\x00\x00"}})
	}
	tab = tab.with(grow)
	checkShape(t, "9,000 keys added in one place", tab, 14000)
	for i := range grow {
		grow[i].del = true
	}
	tab = tab.with(grow)
	checkShape(t, "the 9,000 deleted", tab, 5000)
}

func checkShape(t *testing.T, when string, tab *table, want int) {
	t.Helper()
	n, last := 0, ""
	for gi, g := range tab.groups {
		if len(g) == 0 || len(g) > maxGroupLeaves {
			t.Fatalf("%s: group %d holds %d leaves, want 1 to %d", when, gi, len(g), maxGroupLeaves)
		}
		for li, l := range g {
			records := l.records()
			if len(records) == 0 || len(records) > maxLeafRecords || len(records) != int(l.n) {
				t.Fatalf("%s: leaf %d of group %d holds %d records (counted %d), want 1 to %d", when, li, gi, len(records), l.n, maxLeafRecords)
			}
			for _, r := range records {
				if r.key <= last {
					t.Fatalf("%s: key %q after %q", when, r.key, last)
				}
				last = r.key
			}
			n += len(records)
		}
	}
	if n != want || tab.n != want {
		t.Fatalf("%s: %d records, counted %d, want %d", when, n, tab.n, want)
	}
}
