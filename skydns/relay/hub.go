package relay

import (
	"context"
	"errors"
	"sort"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// hubKey is what makes two watches the same upstream watch.
type hubKey struct {
	key, end        string
	prevKV          bool
	noPut, noDelete bool
}

// batch is what one upstream watch delivered over one window: the
// revisions from..to (to is the header's revision after a progress
// notification, else the last event's), and the response that carries
// its events marshalled once, without a watch ID. Only the bytes are
// kept: the rare watcher that starts inside a batch reads them back.
type batch struct {
	from, to int64
	progress bool // no event: a progress notification
	body     []byte
}

// hub is one upstream watch and the batches it made, kept for the
// watchers still sending them (up to retain bytes). Each watcher reads
// the batches at its own pace; none waits for another.
type hub struct {
	key    hubKey
	retain int
	cancel context.CancelFunc

	mu      sync.Mutex
	ready   chan struct{}      // closed once the upstream watch is open (or failed)
	changed chan struct{}      // closed and replaced at each new batch or the end
	header  *pb.ResponseHeader // the latest upstream header
	batches []*batch
	first   int64 // the first revision the kept batches cover
	next    int64 // the first revision no batch covers yet
	kept    int   // bytes of the kept batches' bodies
	end     *pb.WatchResponse
	users   int // watchers reading it; guarded by the BatchingWatch's lock
}

// newHub opens the upstream watch of key from revision start (0: now),
// batching what it delivers every window.
func newHub(ctx context.Context, upstream clientv3.Watcher, key hubKey, start int64, window time.Duration, retain int) *hub {
	ctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	h := &hub{key: key, retain: retain, cancel: cancel, ready: make(chan struct{}), changed: make(chan struct{}),
		first: start, next: start}
	opts := []clientv3.OpOption{clientv3.WithRange(key.end), clientv3.WithRev(start), clientv3.WithProgressNotify(), clientv3.WithCreatedNotify()}
	if key.prevKV {
		opts = append(opts, clientv3.WithPrevKV())
	}
	if key.noPut {
		opts = append(opts, clientv3.WithFilterPut())
	}
	if key.noDelete {
		opts = append(opts, clientv3.WithFilterDelete())
	}
	go h.run(ctx, upstream.Watch(ctx, key.key, opts...), window)
	return h
}

// run gathers the upstream responses and publishes them as one batch a
// window, until the upstream watch ends.
func (h *hub) run(ctx context.Context, wch clientv3.WatchChan, window time.Duration) {
	tick := time.NewTicker(window)
	defer tick.Stop()
	var pending []*mvccpb.Event
	var header *pb.ResponseHeader
	progress := false
	for {
		select {
		case resp, ok := <-wch:
			switch {
			case !ok:
				h.finish(&pb.WatchResponse{Header: h.latest(), Canceled: true, CancelReason: "the relay's upstream watch closed"})
				return
			case resp.CompactRevision != 0:
				h.finish(&pb.WatchResponse{Header: &resp.Header, Canceled: true, CompactRevision: resp.CompactRevision})
				return
			case resp.Canceled || resp.Err() != nil:
				h.finish(&pb.WatchResponse{Header: &resp.Header, Canceled: true, CancelReason: upstreamReason(resp)})
				return
			case resp.Created:
				h.open(&resp.Header)
				continue
			}
			for _, ev := range resp.Events {
				pending = append(pending, (*mvccpb.Event)(ev))
			}
			header = &resp.Header
			progress = progress || resp.IsProgressNotify()
		case <-tick.C:
			if len(pending) > 0 || progress {
				h.publish(header, pending, len(pending) == 0)
				pending, progress = nil, false
			}
		case <-ctx.Done():
			h.finish(&pb.WatchResponse{Header: h.latest(), Canceled: true, CancelReason: "the relay is stopping"})
			return
		}
	}
}

func upstreamReason(resp clientv3.WatchResponse) string {
	if err := resp.Err(); err != nil {
		return err.Error()
	}
	return "the relay's upstream watch was cancelled"
}

// open records the upstream watch's creation: a watch from now starts at
// the revision after the header's.
func (h *hub) open(header *pb.ResponseHeader) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.header = header
	if h.next == 0 {
		h.first, h.next = header.Revision+1, header.Revision+1
	}
	close(h.ready)
}

// publish marshals one window's events once and keeps them as a batch.
func (h *hub) publish(header *pb.ResponseHeader, events []*mvccpb.Event, progress bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	b := &batch{from: h.next, to: header.Revision, progress: progress}
	if !progress {
		b.to = events[len(events)-1].Kv.ModRevision
	}
	if b.to < b.from { // progress before the revision a watch from the future starts at
		h.header = header
		return
	}
	body, err := (&pb.WatchResponse{Header: header, Events: events}).Marshal()
	if err != nil { // a gogoproto message marshals unless it is broken
		panic(err)
	}
	b.body = body
	h.header = header
	h.batches = append(h.batches, b)
	h.kept += len(body)
	h.next = b.to + 1
	for len(h.batches) > 1 && h.kept > h.retain {
		h.kept -= len(h.batches[0].body)
		h.batches = h.batches[1:]
		h.first = h.batches[0].from
	}
	h.wake()
}

// finish records why the upstream watch ended; each watcher sends it
// after the batches before it.
func (h *hub) finish(end *pb.WatchResponse) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.end = end
	select {
	case <-h.ready:
	default:
		close(h.ready)
	}
	h.wake()
}

func (h *hub) wake() {
	close(h.changed)
	h.changed = make(chan struct{})
}

func (h *hub) latest() *pb.ResponseHeader {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.header == nil {
		return &pb.ResponseHeader{}
	}
	return h.header
}

// errBehind says that a watcher needs revisions the hub no longer keeps.
var errBehind = errors.New("behind the relay's kept batches")

// after returns the kept batches that cover next or later revisions, the
// channel closed at the next change, and the end once the upstream watch
// is over and no batch is left to send. errBehind: next is before the
// first batch kept.
func (h *hub) after(next int64) ([]*batch, <-chan struct{}, *pb.WatchResponse, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if next < h.first {
		return nil, nil, nil, errBehind
	}
	i := sort.Search(len(h.batches), func(i int) bool { return h.batches[i].to >= next })
	out := h.batches[i:]
	if len(out) == 0 && h.end != nil {
		return nil, nil, h.end, nil
	}
	return out, h.changed, nil, nil
}

// startAt places a watcher at revision start, which the hub must still
// cover (0: the first revision it has not batched yet); it returns the
// revision the watcher starts at and the header of its created response.
// Call it once ready is closed.
func (h *hub) startAt(start int64) (int64, *pb.ResponseHeader, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.end != nil || h.header == nil {
		return 0, nil, errBehind
	}
	if start == 0 {
		start = h.next
	}
	if start < h.first {
		return 0, nil, errBehind
	}
	header := *h.header
	header.Revision = max(header.Revision, start-1)
	return start, &header, nil
}

// over says whether the upstream watch has ended.
func (h *hub) over() bool { return h.ending() != nil }

// ending is the response that ended the upstream watch, or nil.
func (h *hub) ending() *pb.WatchResponse {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.end
}
