package memlimit

import (
	"context"
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestForIsTheLiveHeapTimesTheFactorPlusTheHeadroom(t *testing.T) {
	cases := []struct {
		live     uint64
		factor   float64
		headroom uint64
		want     int64
	}{
		{16 << 20, 1.25, 8 << 20, 28 << 20},
		{0, 1.5, DefaultHeadroom, DefaultHeadroom},
		{math.MaxUint64, 2, 0, math.MaxInt64},
	}
	for _, c := range cases {
		if got := For(c.live, c.factor, c.headroom); got != c.want {
			t.Errorf("For(%d, %g, %d) = %d, want %d", c.live, c.factor, c.headroom, got, c.want)
		}
	}
}

// TestFollowSetsTheLimitAgainAfterACollection: the limit is set at once,
// after the live heap grows and a collection runs it is set again from the
// new live heap, and when ctx ends the limit of before is back.
func TestFollowSetsTheLimitAgainAfterACollection(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); debug.SetMemoryLimit(before) })
	const headroom = 64 << 20
	if !Follow(ctx, 2, headroom) {
		t.Fatal("Follow set nothing, with GOMEMLIMIT unset")
	}
	first := debug.SetMemoryLimit(-1)
	if first < headroom || first == math.MaxInt64 {
		t.Fatalf("limit %d right after Follow, want the headroom %d plus twice the live heap", first, headroom)
	}
	grown := make([]byte, 32<<20) // the live heap grows by 32 MiB
	want := int64(headroom + 2*(32<<20))
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		if got := debug.SetMemoryLimit(-1); got >= want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("limit %d after collections with 32 MiB live, want at least %d", debug.SetMemoryLimit(-1), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
	runtime.KeepAlive(grown)
	cancel()
	for debug.SetMemoryLimit(-1) != before {
		if time.Now().After(deadline) {
			t.Fatalf("limit %d after ctx ended, want the limit of before, %d", debug.SetMemoryLimit(-1), before)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestFollowLeavesTheOperatorsGOMEMLIMIT(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "1GiB")
	before := debug.SetMemoryLimit(-1)
	if Follow(context.Background(), 1.25, DefaultHeadroom) {
		t.Error("Follow set a limit though GOMEMLIMIT is set")
	}
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("limit %d, want it left at %d", got, before)
	}
}
