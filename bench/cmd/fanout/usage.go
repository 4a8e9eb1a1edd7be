package main

import (
	"context"
	"sync"
	"time"

	"github.com/kubesky/kubesky/bench/proc"
)

// usage is the CPU and memory of the cluster's processes over one phase,
// sampled from /proc every sampleEvery.
type usage struct {
	servers []*server
	start   time.Time
	cpu0    map[string]time.Duration
	mu      sync.Mutex
	peakCPU map[string]float64 // the most cores used over one sample
	peakRSS map[string]int64
	stop    context.CancelFunc
	done    chan struct{}
}

const sampleEvery = 500 * time.Millisecond

func measure(servers []*server) *usage {
	ctx, cancel := context.WithCancel(context.Background())
	u := &usage{servers: servers, start: time.Now(), cpu0: cpuTimes(servers),
		peakCPU: map[string]float64{}, peakRSS: map[string]int64{}, stop: cancel, done: make(chan struct{})}
	go u.sample(ctx)
	return u
}

func (u *usage) sample(ctx context.Context) {
	defer close(u.done)
	prev, at := u.cpu0, u.start
	t := time.NewTicker(sampleEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			cur := cpuTimes(u.servers)
			u.mu.Lock()
			for _, s := range u.servers {
				u.peakCPU[s.name] = max(u.peakCPU[s.name], float64(cur[s.name]-prev[s.name])/float64(now.Sub(at)))
				if m, err := proc.ReadMemory(s.proc.PID()); err == nil {
					u.peakRSS[s.name] = max(u.peakRSS[s.name], m.RSS)
				}
			}
			u.mu.Unlock()
			prev, at = cur, now
		}
	}
}

// serverUsage is one process's figures over a phase.
type serverUsage struct {
	name    string
	cores   float64 // CPU seconds per second, on average
	peak    float64 // the most over one sample
	rss     int64   // resident at the end
	peakRSS int64
}

// finish stops sampling and returns each server's figures.
func (u *usage) finish() []serverUsage {
	u.stop()
	<-u.done
	wall := time.Since(u.start)
	cur := cpuTimes(u.servers)
	var out []serverUsage
	for _, s := range u.servers {
		m, _ := proc.ReadMemory(s.proc.PID())
		out = append(out, serverUsage{name: s.name, cores: float64(cur[s.name]-u.cpu0[s.name]) / float64(wall),
			peak: u.peakCPU[s.name], rss: m.RSS, peakRSS: max(u.peakRSS[s.name], m.RSS)})
	}
	return out
}

func cpuTimes(servers []*server) map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, s := range servers {
		out[s.name], _ = proc.CPUTime(s.proc.PID())
	}
	return out
}
