package registry

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Probe checks, every interval, that etcd answers a count of the keys
// under one prefix, and tells who asks whether it does and since when it
// does not.
type Probe struct {
	store    *Store
	key      string // counted with a prefix range by each probe
	interval time.Duration
	up       prometheus.Gauge // 1 while etcd answers
	log      *slog.Logger

	reachable   atomic.Bool  // the last probe succeeded
	lastSeen    atomic.Int64 // unix nanoseconds of the last successful probe
	back        *broadcast   // fires whenever etcd answers again after an outage
	reconnected chan struct{}
}

// NewProbe returns a probe of store that counts the keys under key every
// interval and sets up to 1 while etcd answers.
func NewProbe(store *Store, key string, interval time.Duration, up prometheus.Gauge, log *slog.Logger) *Probe {
	return &Probe{store: store, key: key, interval: interval, up: up, log: log,
		back: newBroadcast(), reconnected: make(chan struct{}, 1)}
}

// Run probes until ctx ends.
func (p *Probe) Run(ctx context.Context) {
	tick := time.NewTicker(p.interval)
	defer tick.Stop()
	for {
		p.probe(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (p *Probe) probe(ctx context.Context) {
	_, err := p.store.get(ctx, p.key, clientv3.WithCountOnly())
	if ctx.Err() == nil {
		p.set(err)
	}
}

// set records a probe's outcome. When etcd answers again after an outage,
// Reconnected says so: retries of single groups may be backing off for a
// while yet.
func (p *Probe) set(err error) {
	up := err == nil
	seenBefore := p.lastSeen.Load() != 0
	if up {
		p.lastSeen.Store(time.Now().UnixNano())
	}
	p.up.Set(boolFloat(up))
	switch {
	case p.reachable.Swap(up) == up:
	case !up:
		p.log.Warn("etcd unreachable", "err", err)
	default:
		p.log.Info("etcd reachable")
		p.back.fire()
		if seenBefore {
			select {
			case p.reconnected <- struct{}{}:
			default:
			}
		}
	}
}

// Reachable reports whether the last probe succeeded.
func (p *Probe) Reachable() bool { return p.reachable.Load() }

// UnreachableFor returns how long etcd has not answered a probe.
func (p *Probe) UnreachableFor() time.Duration {
	if p.reachable.Load() {
		return 0
	}
	return time.Since(time.Unix(0, p.lastSeen.Load()))
}

// Back returns a channel closed the next time a probe finds etcd
// answering after one that did not (or before any did).
func (p *Probe) Back() <-chan struct{} { return p.back.wait() }

// Reconnected receives when etcd answers again after an outage, not at the
// first answer; one such news waits for its reader.
func (p *Probe) Reconnected() <-chan struct{} { return p.reconnected }

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// broadcast wakes everyone waiting on it each time it fires.
type broadcast struct {
	mu sync.Mutex
	ch chan struct{} // closed and replaced by fire
}

func newBroadcast() *broadcast { return &broadcast{ch: make(chan struct{})} }

// wait returns a channel closed by the next fire.
func (b *broadcast) wait() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ch
}

func (b *broadcast) fire() {
	b.mu.Lock()
	defer b.mu.Unlock()
	close(b.ch)
	b.ch = make(chan struct{})
}
