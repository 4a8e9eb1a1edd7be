package main

import (
	"context"
	"errors"
	"hash/maphash"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

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
	id       int
	keys     map[uint64]int64 // touched only by the ListWatcher's goroutine
	applied  atomic.Int64     // the last revision applied
	lists    atomic.Int64     // full lists delivered
	errors   atomic.Int64     // State changes carrying an error other than the gate's cut
	timeouts atomic.Int64     // those errors that are a request's deadline passing
	others   *errorKinds      // the other errors' messages, shared by the fleet
	stall    atomic.Pointer[chan struct{}]
	track    *tracker
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
	if s.Err == nil || strings.Contains(s.Err.Error(), "watch channel closed") {
		return
	}
	r.errors.Add(1)
	if timedOut(s.Err) {
		r.timeouts.Add(1)
		return
	}
	r.others.add(s.Err)
}

// errorKinds counts errors by message, for the log.
type errorKinds struct {
	mu    sync.Mutex
	count map[string]int
}

func (k *errorKinds) add(err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.count == nil {
		k.count = map[string]int{}
	}
	k.count[err.Error()]++
}

// take returns the counts so far and starts again.
func (k *errorKinds) take() map[string]int {
	k.mu.Lock()
	defer k.mu.Unlock()
	c := k.count
	k.count = nil
	return c
}

// timedOut says whether err is a request's deadline passing (in the
// client, or reported by the server), rather than etcd refusing it.
func timedOut(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded
}

// fleet is W readers sharing clients, readersPerClient to each, and the
// gates that can cut them all off from etcd at once.
type fleet struct {
	readers []*reader
	others  errorKinds // the readers' errors other than timeouts
	clients []*clientv3.Client
	gates   []*etcdtest.Gate
	cancel  context.CancelFunc
	done    sync.WaitGroup
}

// startFleet starts n readers, o.startRate a second (as a DaemonSet rolls
// out), o.perClient to a client; a client c talks to endpointsOf(c).
func startFleet(n int, o options, endpointsOf func(client int) []string, track *tracker, log *slog.Logger) (*fleet, error) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &fleet{cancel: cancel}
	pace := time.NewTicker(time.Second / time.Duration(o.startRate))
	defer pace.Stop()
	slots := newListSlots(ctx, o.listSlots)
	for i := range n {
		<-pace.C
		if i%o.perClient == 0 {
			c, err := newClient(endpointsOf(len(f.clients)))
			if err != nil {
				f.stop()
				return nil, err
			}
			f.clients = append(f.clients, c)
			f.gates = append(f.gates, &etcdtest.Gate{Client: c})
		}
		r := &reader{id: i, track: track, others: &f.others}
		f.readers = append(f.readers, r)
		lw := &etcdstore.ListWatcher{
			Source: slots.source(f.gates[len(f.gates)-1]), Prefix: zonePref + "/", RelistJitter: o.jitter,
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

// listSlots bounds the readers of this process that list at once. A list
// holds the keys read so far until its last page; thousands of readers
// re-listing together on this machine's 2 cores would all be half way
// through at once, holding more copies of the zone than fit in memory,
// where each skydns lists on its own node. Taking turns does not slow
// them down as a whole: their decoding is bound by this process's CPU.
type listSlots struct {
	held chan struct{} // one value per list in progress; nil: unbounded
	stop context.Context
}

func newListSlots(stop context.Context, n int) *listSlots {
	s := &listSlots{stop: stop}
	if n > 0 {
		s.held = make(chan struct{}, n)
	}
	return s
}

// source wraps one reader's etcd client: its list pages take a slot.
func (s *listSlots) source(src etcdstore.Source) etcdstore.Source {
	if s.held == nil {
		return src
	}
	return &slotted{Source: src, slots: s}
}

// slotted is one reader's client under listSlots: its first list page
// waits for a slot, and its last page (or a failed one) gives it back.
// Counts (the probes, the revision checks) pass freely.
type slotted struct {
	etcdstore.Source
	slots   *listSlots
	holding bool // touched only by the reader's ListWatcher goroutine
}

func (s *slotted) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	if clientv3.OpGet(key, opts...).IsCountOnly() {
		return s.Source.Get(ctx, key, opts...)
	}
	if !s.holding {
		select {
		case s.slots.held <- struct{}{}:
			s.holding = true
		case <-s.slots.stop.Done():
			return nil, s.slots.stop.Err()
		}
		// The wait was this process's queue, not etcd's time: the page
		// gets the whole of its request timeout.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), listPageTimeout)
		defer cancel()
	}
	resp, err := s.Source.Get(ctx, key, opts...)
	if err != nil || !resp.More {
		<-s.slots.held
		s.holding = false
	}
	return resp, err
}

// listPageTimeout is a page's timeout after a wait for a slot: the
// ListWatcher's default RequestTimeout.
const listPageTimeout = 5 * time.Second
