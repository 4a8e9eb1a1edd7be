package kube2sky

import (
	"runtime/debug"
	"testing"
)

// gcPercent reads the GC target without changing it.
func gcPercent() int {
	n := debug.SetGCPercent(-1)
	debug.SetGCPercent(n)
	return n
}

func TestTightGCHalvesTheTargetUntilTheLastFullReconcileEnds(t *testing.T) {
	before := debug.SetGCPercent(80)
	defer debug.SetGCPercent(before)
	first := tightGC(50)
	second := tightGC(50)
	if got := gcPercent(); got != 25 {
		t.Fatalf("during full reconciles the target is %d, want 25", got)
	}
	first()
	if got := gcPercent(); got != 25 {
		t.Errorf("with one full reconcile still running the target is %d, want 25", got)
	}
	second()
	if got := gcPercent(); got != 80 {
		t.Errorf("after both the target is %d, want 80 again", got)
	}
	tightGC(-1)()
	if got := gcPercent(); got != 80 {
		t.Errorf("--gc-percent -1 moved the target to %d", got)
	}
	defer tightGC(4)()
	if got := gcPercent(); got != 10 {
		t.Errorf("--gc-percent 4 tightens to %d, want the floor of 10", got)
	}
}
