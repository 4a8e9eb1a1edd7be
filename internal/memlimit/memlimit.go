// Package memlimit keeps the Go runtime's soft memory limit (the limit
// GOMEMLIMIT sets) a fixed proportion above the live heap, recomputed
// after every collection.
//
// The GC target (GOGC) bounds how far the heap grows past what is live,
// but memory the heap once used and no longer does (after a full list,
// say) is given back to the OS only slowly. With a limit just above what
// the heap needs, the runtime gives that memory back at once and collects
// before the heap and the runtime's own structures together pass it.
// Because the limit follows the live heap, a zone that grows raises it, so
// the collector never runs in a loop against a limit the live heap has
// outgrown.
package memlimit

import (
	"context"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// DefaultHeadroom is added to the live heap's share: room for goroutine
// stacks, the runtime's own structures and the allocations between two
// collections.
const DefaultHeadroom = 8 << 20

// For is the limit for a live heap of live bytes: live × factor +
// headroom, at most math.MaxInt64.
func For(live uint64, factor float64, headroom uint64) int64 {
	limit := float64(live)*factor + float64(headroom)
	if limit >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(limit)
}

// Follow sets the limit For the live heap now and again after every
// collection until ctx ends, and then puts back the limit it found. It
// returns false, and sets nothing, when the environment sets GOMEMLIMIT:
// the operator's limit stands.
func Follow(ctx context.Context, factor float64, headroom uint64) bool {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		return false
	}
	var mu sync.Mutex
	before := debug.SetMemoryLimit(-1)
	update := func() {
		mu.Lock()
		defer mu.Unlock()
		if ctx.Err() == nil {
			debug.SetMemoryLimit(For(LiveHeap(), factor, headroom))
		}
	}
	update()
	afterEachGC(ctx, update)
	context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		debug.SetMemoryLimit(before)
	})
	return true
}

// LiveHeap is the heap the last collection marked live, in bytes.
func LiveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// sentinel is an object nothing refers to, whose finalizer runs after the
// collection that finds it unreachable. It holds a pointer so that it is
// not a tiny allocation, whose finalizer could wait for its neighbours.
type sentinel struct{ _ *int }

// afterEachGC calls fn after every collection until ctx ends, from the
// runtime's finalizer goroutine.
func afterEachGC(ctx context.Context, fn func()) {
	s := &sentinel{}
	runtime.SetFinalizer(s, func(*sentinel) {
		if ctx.Err() != nil {
			return
		}
		fn()
		afterEachGC(ctx, fn)
	})
}
