package leader

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// errKeyGone is a campaign whose own election key is no longer the one it
// put: its lease ended, or it was deleted, while it waited.
var errKeyGone = errors.New("this replica's election key is gone (its lease ended or it was deleted)")

// The election is a queue of keys under the prefix, one per session,
// ordered by create revision; the first leads. concurrency.Election keeps
// the same keys (its Observe reads them), but its Campaign turns a watch
// refused after a compaction, or a session that ends while it waits, into
// a failed campaign, and then resigns with a request that has no deadline.
// Here every request has a deadline, a compacted or broken watch is only a
// reason to read the queue again, and a watch is on a member that has a
// leader, so a partitioned member cannot hide the predecessor's delete.

// rereadPause is the wait before the queue is read again after a watch
// failed, so that a member refusing watches is not asked in a tight loop.
const rereadPause = 100 * time.Millisecond

// join puts this session's key at the end of the queue (or finds it there)
// and returns its create revision.
func (e *Elector) join(ctx context.Context, sess *concurrency.Session, key, value string) (int64, error) {
	rctx, cancel := context.WithTimeout(ctx, e.cfg.RequestTimeout)
	defer cancel()
	resp, err := e.etcd.Txn(rctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, value, clientv3.WithLease(sess.Lease()))).
		Else(clientv3.OpGet(key)).Commit()
	if err != nil {
		return 0, fmt.Errorf("putting the election key %s: %w", key, err)
	}
	if resp.Succeeded {
		return resp.Header.Revision, nil
	}
	return resp.Responses[0].GetResponseRange().Kvs[0].CreateRevision, nil
}

// awaitTurn returns when no key created before this replica's (key, rev)
// is left, that is when this replica leads.
func (e *Elector) awaitTurn(ctx context.Context, key string, rev int64) error {
	for {
		ahead, at, err := e.predecessor(ctx, key, rev)
		if err != nil {
			return err
		}
		if ahead == "" {
			return nil
		}
		if err := e.waitDeleted(ctx, ahead, at+1); err != nil {
			e.log.Debug("reading the election queue again", "err", err)
			if !sleep(ctx, rereadPause) {
				return ctx.Err()
			}
		}
	}
}

// predecessor returns the last key created before rev and the revision it
// was read at, or "" when this replica's key is first. It fails with
// errKeyGone when key is no longer the one created at rev.
func (e *Elector) predecessor(ctx context.Context, key string, rev int64) (string, int64, error) {
	rctx, cancel := context.WithTimeout(ctx, e.cfg.RequestTimeout)
	defer cancel()
	before := append(clientv3.WithLastCreate(), clientv3.WithMaxCreateRev(rev-1))
	resp, err := e.etcd.Txn(rctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", rev)).
		Then(clientv3.OpGet(e.cfg.Prefix+"/", before...)).Commit()
	switch {
	case err != nil:
		return "", 0, fmt.Errorf("reading the election queue: %w", err)
	case !resp.Succeeded:
		return "", 0, errKeyGone
	}
	kvs := resp.Responses[0].GetResponseRange().Kvs
	if len(kvs) == 0 {
		return "", resp.Header.Revision, nil
	}
	return string(kvs[0].Key), resp.Header.Revision, nil
}

// waitDeleted returns nil when key is deleted at or after revision from,
// and an error when the watch ends first (ctx ended, the revision was
// compacted, the member lost its leader).
func (e *Elector) waitDeleted(ctx context.Context, key string, from int64) error {
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	for resp := range e.etcd.Watch(wctx, key, clientv3.WithRev(from)) {
		if err := resp.Err(); err != nil {
			return err
		}
		for _, ev := range resp.Events {
			if ev.Type == mvccpb.DELETE {
				return nil
			}
		}
	}
	return cmp.Or(ctx.Err(), errors.New("the watch of the election key ended"))
}

// sleep waits for d; it returns false if ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
