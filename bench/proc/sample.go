package proc

import (
	"context"
	"sync"
	"time"
)

// rssSample is a process's VmRSS at one moment.
type rssSample struct {
	at  time.Time
	rss int64
}

// MemoryTrace is a process's VmRSS read at a fixed interval, so that a
// peak can be placed in a phase of the run (VmHWM only says how high it
// went, not when).
type MemoryTrace struct {
	mu      sync.Mutex
	samples []rssSample
	stop    context.CancelFunc
	done    chan struct{}
}

// TraceMemory reads pid's VmRSS every interval until Stop is called or the
// process is gone.
func TraceMemory(pid int, every time.Duration) *MemoryTrace {
	ctx, cancel := context.WithCancel(context.Background())
	t := &MemoryTrace{stop: cancel, done: make(chan struct{})}
	go t.run(ctx, pid, every)
	return t
}

func (t *MemoryTrace) run(ctx context.Context, pid int, every time.Duration) {
	defer close(t.done)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		m, err := ReadMemory(pid)
		if err != nil {
			return
		}
		t.mu.Lock()
		t.samples = append(t.samples, rssSample{at: time.Now(), rss: m.RSS})
		t.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Stop ends the sampling and waits for it to end.
func (t *MemoryTrace) Stop() {
	t.stop()
	<-t.done
}

// PeakBetween returns the highest VmRSS sampled from from (included) to to
// (excluded), and when it was sampled; zero when no sample falls there.
func (t *MemoryTrace) PeakBetween(from, to time.Time) (rss int64, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, s := range t.samples {
		if !s.at.Before(from) && s.at.Before(to) && s.rss > rss {
			rss, at = s.rss, s.at
		}
	}
	return rss, at
}
