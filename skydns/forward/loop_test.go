package forward

import (
	"strings"
	"testing"
	"time"
)

func TestALoopVerdictFollowsTheProbes(t *testing.T) {
	l := newLoops()
	now := time.Unix(1000, 0)
	const a, b = "127.0.0.1:5301", "127.0.0.1:5302"

	if due := l.due([]string{a, b}, now); len(due) != 2 {
		t.Fatalf("due %q, want both before any probe", due)
	}
	if due := l.due([]string{a, b}, now); len(due) != 0 {
		t.Fatalf("due %q while their probes are in flight", due)
	}
	name := l.probeName(a, ".")
	if !strings.HasSuffix(name, ".kubesky-loop.") || l.cameBack("x.kubesky-loop.") || l.cameBack("www.example.org.") {
		t.Fatalf("probe name %q, or a name not in flight taken for one", name)
	}
	if !l.cameBack(name) {
		t.Fatal("the probe in flight not recognised")
	}
	if _, before, after := l.finish(name, true, now); before != loopUnknown || after != loopFound {
		t.Fatalf("verdict %v -> %v, want unknown -> found", before, after)
	}
	if got := l.usable([]string{a, b}); len(got) != 1 || got[0] != b {
		t.Fatalf("usable %q, want only %s", got, b)
	}
	if err := l.err(); err == nil || !strings.Contains(err.Error(), a) {
		t.Fatalf("err %v, want one naming %s", err, a)
	}
	nameB := l.probeName(b, "corp.example.")
	if _, _, after := l.finish(nameB, false, now); after != loopUnknown {
		t.Fatalf("an unanswered probe gave %v", after)
	}
	if due := l.due([]string{a, b}, now.Add(loopRetry)); len(due) != 1 || due[0] != b {
		t.Fatalf("due %q after loopRetry, want only %s", due, b)
	}
	if due := l.due([]string{a}, now.Add(loopRecheck)); len(due) != 1 {
		t.Fatalf("the looping upstream not probed again after loopRecheck")
	}
	mended := l.probeName(a, ".")
	if _, before, after := l.finish(mended, true, now.Add(loopRecheck)); before != loopFound || after != loopClear {
		t.Fatalf("verdict %v -> %v, want found -> clear once the probe no longer comes back", before, after)
	}
	if err := l.err(); err != nil || len(l.usable([]string{a, b})) != 2 {
		t.Fatalf("err %v, usable %q after the loop was mended", err, l.usable([]string{a, b}))
	}
	if due := l.due([]string{a}, now.Add(time.Hour)); len(due) != 0 {
		t.Fatal("a clean upstream probed again")
	}
}
