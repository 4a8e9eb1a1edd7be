package main

import (
	"context"
	"hash/maphash"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/etcdstore"
	"github.com/kubesky/kubesky/etcdstore/etcdtest"
)

// reader is one simulated skydns: etcdstore's ListWatcher, keeping per
// event what skydns's mirror keeps to know its content (which keys exist,
// at which revision), as a map from a 64-bit hash of the key to its mod
// revision. It skips what skydns builds from the values (parsing the JSON
// and the answer tables): 5,000 full copies of the zone do not fit here.
type reader struct {
	id      int
	keys    map[uint64]int64 // touched only by the ListWatcher's goroutine
	applied atomic.Int64     // the last revision applied
	lists   atomic.Int64     // full lists delivered
	errors  atomic.Int64     // State changes carrying an error other than the gate's cut
	stall   atomic.Pointer[chan struct{}]
	track   *tracker
}

var keySeed = maphash.MakeSeed()

func (r *reader) onUpdate(u contract.Update) {
	if stall := r.stall.Load(); stall != nil {
		<-*stall
	}
	if u.Full {
		r.keys = make(map[uint64]int64, len(u.Events))
		r.lists.Add(1)
	}
	for _, ev := range u.Events {
		h := maphash.String(keySeed, ev.Key)
		if ev.Type == contract.Delete {
			delete(r.keys, h)
		} else {
			r.keys[h] = u.Revision
		}
	}
	r.applied.Store(u.Revision)
	if !u.Full {
		r.track.applied(r.id, u.Revision, time.Now())
	}
}

func (r *reader) onState(s etcdstore.State) {
	if s.Err != nil && !strings.Contains(s.Err.Error(), "watch channel closed") {
		r.errors.Add(1)
	}
}

// fleet is W readers sharing clients, readersPerClient to each, and the
// gates that can cut them all off from etcd at once.
type fleet struct {
	readers []*reader
	clients []*clientv3.Client
	gates   []*etcdtest.Gate
	cancel  context.CancelFunc
	done    sync.WaitGroup
}

// startFleet starts n readers, perSecond a second (as a DaemonSet rolls
// out); a client c talks to endpointsOf(c).
func startFleet(n, readersPerClient, perSecond int, endpointsOf func(client int) []string, jitter time.Duration, track *tracker, log *slog.Logger) (*fleet, error) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &fleet{cancel: cancel}
	pace := time.NewTicker(time.Second / time.Duration(perSecond))
	defer pace.Stop()
	for i := range n {
		<-pace.C
		if i%readersPerClient == 0 {
			c, err := newClient(endpointsOf(len(f.clients)))
			if err != nil {
				f.stop()
				return nil, err
			}
			f.clients = append(f.clients, c)
			f.gates = append(f.gates, &etcdtest.Gate{Client: c})
		}
		r := &reader{id: i, track: track}
		f.readers = append(f.readers, r)
		lw := &etcdstore.ListWatcher{
			Source: f.gates[len(f.gates)-1], Prefix: zonePref + "/", RelistJitter: jitter,
			OnUpdate: r.onUpdate, OnState: r.onState, Logger: log.With("reader", i),
		}
		f.done.Add(1)
		go func() { defer f.done.Done(); _ = lw.Run(ctx) }()
	}
	return f, nil
}

// current counts the readers that have applied rev or later.
func (f *fleet) current(rev int64) int {
	n := 0
	for _, r := range f.readers {
		if r.applied.Load() >= rev {
			n++
		}
	}
	return n
}

func (f *fleet) sum(of func(*reader) int64) int64 {
	var n int64
	for _, r := range f.readers {
		n += of(r)
	}
	return n
}

func (f *fleet) hold() {
	for _, g := range f.gates {
		g.Hold()
	}
}

func (f *fleet) release() {
	for _, g := range f.gates {
		g.Release()
	}
}

func (f *fleet) stop() {
	f.cancel()
	f.release()
	f.done.Wait()
	for _, c := range f.clients {
		c.Close()
	}
}
