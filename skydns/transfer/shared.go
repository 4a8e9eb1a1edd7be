package transfer

import (
	"sync"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/skydns/resolver"
	"github.com/kubesky/kubesky/skydns/snapshot"
)

// builds shares the records of one zone at one revision between the
// transfers that want them at the same time: the secondaries a NOTIFY
// wakes ask together, and one build serves them all. Nothing is kept once
// the last of them has its records.
type builds struct {
	mu      sync.Mutex // guards running
	running map[buildKey]*build
}

type buildKey struct {
	zone     string
	revision int64
}

// build is one zone being built; rrs is set before done is closed.
type build struct {
	done chan struct{}
	rrs  []dns.RR
}

// records returns zone's records in snap, built once for the callers
// that ask while it is being built. The slice is shared: read it only.
func (b *builds) records(res *resolver.Resolver, snap *snapshot.Snapshot, zone string) []dns.RR {
	key := buildKey{zone, snap.Revision()}
	b.mu.Lock()
	if run, ok := b.running[key]; ok {
		b.mu.Unlock()
		<-run.done
		return run.rrs
	}
	run := &build{done: make(chan struct{})}
	if b.running == nil {
		b.running = make(map[buildKey]*build)
	}
	b.running[key] = run
	b.mu.Unlock()

	run.rrs, _ = Records(res, snap, zone)
	b.mu.Lock()
	delete(b.running, key)
	b.mu.Unlock()
	close(run.done)
	return run.rrs
}
