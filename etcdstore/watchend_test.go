package etcdstore

import "testing"

func TestWatchedEndCoversEveryRangeAWatchTakesTurnsWith(t *testing.T) {
	lw := &ListWatcher{Prefix: "/clusterset/"}
	ends := WatchEnds(lw.Prefix)
	if len(ends) != watchVariants {
		t.Fatalf("WatchEnds has %d ends, want one per variant (%d)", len(ends), watchVariants)
	}
	for lw.watchVariant = range watchVariants {
		end := lw.watchEnd()
		if end > WatchedEnd(lw.Prefix) {
			t.Errorf("variant %d watches up to %q, past WatchedEnd %q", lw.watchVariant, end, WatchedEnd(lw.Prefix))
		}
		if ends[lw.watchVariant] != end {
			t.Errorf("WatchEnds[%d] = %q, the watch ends at %q", lw.watchVariant, ends[lw.watchVariant], end)
		}
	}
	if lw.watchEnd() != WatchedEnd(lw.Prefix) {
		t.Errorf("the widest variant ends at %q, WatchedEnd at %q: a reader is granted more than a watch needs", lw.watchEnd(), WatchedEnd(lw.Prefix))
	}
}
