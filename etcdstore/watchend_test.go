package etcdstore

import "testing"

func TestWatchedEndCoversEveryRangeAWatchTakesTurnsWith(t *testing.T) {
	lw := &ListWatcher{Prefix: "/clusterset/"}
	for lw.watchVariant = range watchVariants {
		if end := lw.watchEnd(); end > WatchedEnd(lw.Prefix) {
			t.Errorf("variant %d watches up to %q, past WatchedEnd %q", lw.watchVariant, end, WatchedEnd(lw.Prefix))
		}
	}
	if lw.watchEnd() != WatchedEnd(lw.Prefix) {
		t.Errorf("the widest variant ends at %q, WatchedEnd at %q: a reader is granted more than a watch needs", lw.watchEnd(), WatchedEnd(lw.Prefix))
	}
}
