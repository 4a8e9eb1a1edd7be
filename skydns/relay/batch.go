package relay

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// watchResponses counts the watch responses sent to readers: "shared"
// ones are a batch's bytes marshalled once for every reader, "own" ones
// were marshalled for one reader (created, cancelled, a batch cut at the
// reader's start revision).
var watchResponses = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "kubesky_relay_watch_responses_total",
	Help: "Watch responses the batching relay sent to readers, by frame (shared: marshalled once for all; own: for one reader).",
}, []string{"frame"})

func init() { prometheus.MustRegister(watchResponses) }

// retainBytes is how much of its batches a hub keeps for the watchers
// sending them behind the others: minutes of a busy cluster's changes.
const retainBytes = 16 << 20

// BatchingWatch is the relay's Watch service when it batches: watches of
// the same range share one upstream watch (a hub), whose events of each
// window go to every watcher as one response marshalled once. A watcher
// from a revision the hub no longer keeps, or that fell that far behind,
// gets an upstream watch of its own; compactions, cancellations and
// progress notifications pass as etcd sends them. Progress requests are
// not answered, as etcd's grpc-proxy does not answer them either.
type BatchingWatch struct {
	pb.UnimplementedWatchServer
	ctx      context.Context // the hubs' upstream watches live until it ends
	upstream clientv3.Watcher
	window   time.Duration
	retain   int // bytes of batches each hub keeps

	mu   sync.Mutex
	hubs map[hubKey]*hub
}

// NewBatchingWatch serves watches of upstream, batching events every
// window.
func NewBatchingWatch(ctx context.Context, upstream clientv3.Watcher, window time.Duration) *BatchingWatch {
	return &BatchingWatch{ctx: ctx, upstream: upstream, window: window, retain: retainBytes, hubs: map[hubKey]*hub{}}
}

// Watch serves one gRPC stream of a reader: its create and cancel
// requests, each watch sent by a goroutine of its own.
func (bw *BatchingWatch) Watch(stream pb.Watch_WatchServer) error {
	ctx, cancel := context.WithCancel(stream.Context())
	s := &watchStream{bw: bw, stream: stream, watches: map[int64]context.CancelFunc{}}
	defer func() { cancel(); s.running.Wait() }()
	for {
		req, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch r := req.RequestUnion.(type) {
		case *pb.WatchRequest_CreateRequest:
			s.create(ctx, r.CreateRequest)
		case *pb.WatchRequest_CancelRequest:
			s.cancel(r.CancelRequest.WatchId)
		}
	}
}

// attach counts one more watcher of key from revision start on a hub
// and returns the hub, the revision to send from and the created
// response's header; or the response that ends the watch at once.
func (bw *BatchingWatch) attach(ctx context.Context, key hubKey, start int64) (*hub, int64, *pb.ResponseHeader, *pb.WatchResponse) {
	bw.mu.Lock()
	h := bw.hubs[key]
	if h == nil || h.over() {
		h = newHub(bw.ctx, bw.upstream, key, start, bw.window, bw.retain)
		bw.hubs[key] = h
	}
	h.users++
	bw.mu.Unlock()
	from, header, end := bw.place(ctx, h, start, false)
	if end == nil && header == nil { // the shared hub does not hold start
		bw.detach(h)
		h = bw.private(key, start)
		from, header, end = bw.place(ctx, h, start, true)
	}
	return h, from, header, end
}

// place waits for h's upstream watch and starts a watcher at start on
// it. If h cannot hold start it returns nil, nil, or for a private hub
// the response that ended its upstream watch.
func (bw *BatchingWatch) place(ctx context.Context, h *hub, start int64, private bool) (int64, *pb.ResponseHeader, *pb.WatchResponse) {
	select {
	case <-h.ready:
	case <-ctx.Done():
		return 0, nil, &pb.WatchResponse{Canceled: true, CancelReason: ctx.Err().Error()}
	}
	from, header, err := h.startAt(start)
	if err == nil {
		return from, header, nil
	}
	if !private {
		return 0, nil, nil
	}
	if end := h.ending(); end != nil {
		return 0, nil, end
	}
	return 0, nil, &pb.WatchResponse{Canceled: true, CancelReason: "the relay's upstream watch did not start"}
}

// private is a hub of one watcher from start, outside the shared ones.
func (bw *BatchingWatch) private(key hubKey, start int64) *hub {
	h := newHub(bw.ctx, bw.upstream, key, start, bw.window, bw.retain)
	bw.mu.Lock()
	h.users = 1
	bw.mu.Unlock()
	return h
}

// detach counts one watcher of h less; the last one stops its upstream
// watch.
func (bw *BatchingWatch) detach(h *hub) {
	bw.mu.Lock()
	defer bw.mu.Unlock()
	h.users--
	if h.users > 0 {
		return
	}
	if bw.hubs[h.key] == h {
		delete(bw.hubs, h.key)
	}
	h.cancel()
}

// watchStream is one reader's gRPC stream and its watches.
type watchStream struct {
	bw      *BatchingWatch
	stream  pb.Watch_WatchServer
	sending sync.Mutex // a gRPC stream takes one message at a time
	running sync.WaitGroup

	mu      sync.Mutex
	watches map[int64]context.CancelFunc
	nextID  int64
}

func (s *watchStream) send(m any) error {
	s.sending.Lock()
	defer s.sending.Unlock()
	frame := "own"
	if _, ok := m.(*sharedFrame); ok {
		frame = "shared"
	}
	watchResponses.WithLabelValues(frame).Inc()
	return s.stream.SendMsg(m)
}

// create starts the watch cr asks for, under the ID it names or the next
// free one.
func (s *watchStream) create(ctx context.Context, cr *pb.WatchCreateRequest) {
	s.mu.Lock()
	id := cr.WatchId
	if id == clientv3.AutoWatchID {
		for _, used := s.watches[s.nextID]; used; _, used = s.watches[s.nextID] {
			s.nextID++
		}
		id = s.nextID
	} else if _, used := s.watches[id]; used {
		s.mu.Unlock()
		_ = s.send(&pb.WatchResponse{WatchId: id, Created: true, Canceled: true, CancelReason: "watch ID in use"})
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	s.watches[id] = cancel
	s.mu.Unlock()
	s.running.Add(1)
	go func() {
		defer s.running.Done()
		s.serve(ctx, id, cr)
	}()
}

// cancel ends watch id and confirms it.
func (s *watchStream) cancel(id int64) {
	s.mu.Lock()
	stop, ok := s.watches[id]
	delete(s.watches, id)
	s.mu.Unlock()
	if ok {
		stop()
		_ = s.send(&pb.WatchResponse{WatchId: id, Canceled: true})
	}
}

func (s *watchStream) forget(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.watches, id)
}

// serve sends watch id its created response, then every batch from its
// start revision on, until it is cancelled or its upstream watch ends.
func (s *watchStream) serve(ctx context.Context, id int64, cr *pb.WatchCreateRequest) {
	key := hubKey{key: string(cr.Key), end: string(cr.RangeEnd), prevKV: cr.PrevKv}
	for _, f := range cr.Filters {
		key.noPut = key.noPut || f == pb.WatchCreateRequest_NOPUT
		key.noDelete = key.noDelete || f == pb.WatchCreateRequest_NODELETE
	}
	h, next, header, end := s.bw.attach(ctx, key, cr.StartRevision)
	defer func() { s.bw.detach(h) }()
	if end != nil {
		s.forget(id)
		e := *end
		e.WatchId, e.Created = id, true
		_ = s.send(&e)
		return
	}
	if s.send(&pb.WatchResponse{Header: header, WatchId: id, Created: true}) != nil {
		return
	}
	idField := watchIDField(id)
	for {
		batches, changed, end, err := h.after(next)
		if errors.Is(err, errBehind) {
			s.bw.detach(h)
			h = s.bw.private(key, next)
			if _, _, end = s.bw.place(ctx, h, next, true); end == nil {
				continue
			}
		}
		if end != nil {
			s.forget(id)
			e := *end
			e.WatchId = id
			_ = s.send(&e)
			return
		}
		for _, b := range batches {
			if err := s.sendBatch(b, id, idField, next, cr.ProgressNotify); err != nil {
				return
			}
			next = b.to + 1
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return
		}
	}
}

// sendBatch sends b to a watcher at revision next: its shared bytes if
// it starts there, else the events from next on, marshalled for it.
func (s *watchStream) sendBatch(b *batch, id int64, idField []byte, next int64, progress bool) error {
	if b.from >= next {
		if b.progress && !progress {
			return nil
		}
		return s.send(&sharedFrame{watchID: idField, body: b.body})
	}
	var whole pb.WatchResponse
	if err := whole.Unmarshal(b.body); err != nil {
		return err
	}
	var events []*mvccpb.Event
	for _, ev := range whole.Events {
		if ev.Kv.ModRevision >= next {
			events = append(events, ev)
		}
	}
	if len(events) == 0 {
		return nil
	}
	return s.send(&pb.WatchResponse{Header: whole.Header, WatchId: id, Events: events})
}
