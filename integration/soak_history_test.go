package integration

import (
	"context"
	"fmt"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kubesky/kubesky/integration/soakcheck"
)

// historyRecorder records every revision that touched a prefix, watching
// it from revision 1 for the whole soak, so that skydns's applied updates
// can be judged against etcd's own history even after compactions: before
// each compaction the soak waits (sync) until the recorder has seen every
// revision up to the compacted one.
type historyRecorder struct {
	client *clientv3.Client
	prefix string

	mu        sync.Mutex
	revisions []int64
	lastEvent int64 // the newest revision seen in an event
	progress  int64 // the newest revision the watch confirmed complete
	err       error // why the history is incomplete, if it is
}

// recordHistory starts a recorder of prefix that runs until ctx ends.
func recordHistory(ctx context.Context, client *clientv3.Client, prefix string) *historyRecorder {
	h := &historyRecorder{client: client, prefix: prefix}
	go h.run(ctx)
	return h
}

// run watches from revision 1, resuming after the last event seen
// whenever the watch breaks (a member killed or cut off).
func (h *historyRecorder) run(ctx context.Context) {
	for ctx.Err() == nil {
		from := h.resumeFrom()
		wch := h.client.Watch(h.watchContext(ctx), h.prefix, clientv3.WithPrefix(), clientv3.WithRev(from))
		for resp := range wch {
			if resp.CompactRevision != 0 {
				h.fail(fmt.Errorf("history lost: compacted at %d while the recorder resumed from %d", resp.CompactRevision, from))
				return
			}
			h.add(resp)
		}
	}
}

// watchContext requires a leader, so that a partitioned member's watch
// fails over instead of going quiet; sync's progress requests go to the
// same stream only with the same context metadata.
func (h *historyRecorder) watchContext(ctx context.Context) context.Context {
	return clientv3.WithRequireLeader(ctx)
}

func (h *historyRecorder) resumeFrom() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lastEvent + 1
}

func (h *historyRecorder) add(resp clientv3.WatchResponse) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ev := range resp.Events {
		if rev := ev.Kv.ModRevision; rev > h.lastEvent {
			h.revisions = append(h.revisions, rev)
			h.lastEvent = rev
		}
	}
	if resp.IsProgressNotify() || len(resp.Events) > 0 {
		h.progress = max(h.progress, resp.Header.Revision, h.lastEvent)
	}
}

func (h *historyRecorder) fail(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.err = err
}

// sync waits until the recorder has seen every revision up to the
// store's current one, which it returns.
func (h *historyRecorder) sync(ctx context.Context, timeout time.Duration) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := h.client.Get(ctx, h.prefix, clientv3.WithCountOnly())
	if err != nil {
		return 0, fmt.Errorf("current revision: %w", err)
	}
	target := resp.Header.Revision
	for {
		if h.confirmed() >= target {
			return target, nil
		}
		_ = h.client.RequestProgress(h.watchContext(ctx))
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("the history recorder confirmed %d, not %d, within %v", h.confirmed(), target, timeout)
		case <-time.After(50 * time.Millisecond): // between progress requests
		}
	}
}

func (h *historyRecorder) confirmed() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.progress
}

// history returns what was recorded, or why it is incomplete.
func (h *historyRecorder) history() (soakcheck.History, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return soakcheck.NewHistory(h.revisions), h.err
}
