package registry

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kubesky/kubesky/etcdstore"
	"github.com/kubesky/kubesky/kube2sky/plan"
)

// Fence makes a write conditional on leadership: the election key must
// still exist with the create revision it had when leadership was won. The
// zero fence (no leader election) always holds.
type Fence struct {
	Key string // the election key, "" for the zero fence
	Rev int64  // its create revision
}

// The conditions of a Txn that failed.
var (
	// ErrNotLeader is a write fenced off: leadership was lost.
	ErrNotLeader = errors.New("leadership lost: the election key is gone or replaced")
	// ErrConflict is a write that met a concurrent change.
	ErrConflict = errors.New("a key changed since it was read")
)

// KV is the part of an etcd client the store reads and writes with.
type KV interface {
	Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error)
	Txn(ctx context.Context) clientv3.Txn
}

var _ KV = (*clientv3.Client)(nil)

// Store reads and writes records in etcd. Every request has a deadline;
// batches never exceed maxOps operations.
type Store struct {
	kv       KV
	timeout  time.Duration
	maxOps   int
	pageSize int64
}

// listPageSize is how many keys one request of a Scan reads.
const listPageSize = 5000

// NewStore returns a store over kv whose requests each have timeout and
// whose Txns hold at most maxOps operations.
func NewStore(kv KV, timeout time.Duration, maxOps int) *Store {
	return &Store{kv: kv, timeout: timeout, maxOps: maxOps, pageSize: listPageSize}
}

// MaxOps is the most changes one Txn of the store holds.
func (s *Store) MaxOps() int { return s.maxOps }

// Scan calls fn with every key under prefix, read at one revision, page
// by page, so that a caller keeping only some of the keys never holds them
// all. fn decodes what it keeps (plan.Decode).
func (s *Store) Scan(ctx context.Context, prefix string, fn func(key string, value []byte, modRev int64)) error {
	_, err := etcdstore.Scan(ctx, s.kv, prefix, s.pageSize, s.timeout, func(e *mvccpb.KeyValue) {
		fn(string(e.Key), e.Value, e.ModRevision)
	})
	return err
}

// ScanRange is Scan over the keys from from (included) to end (excluded).
func (s *Store) ScanRange(ctx context.Context, from, end string, fn func(key string, value []byte, modRev int64)) error {
	_, err := etcdstore.ScanRange(ctx, s.kv, from, end, s.pageSize, s.timeout, func(e *mvccpb.KeyValue) {
		fn(string(e.Key), e.Value, e.ModRevision)
	})
	return err
}

func (s *Store) get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	return s.kv.Get(ctx, key, opts...)
}

// Read returns the keys under prefix and the given single keys.
func (s *Store) Read(ctx context.Context, prefix string, keys []string) (plan.Current, error) {
	ops := make([]clientv3.Op, 0, len(keys)+1)
	ops = append(ops, clientv3.OpGet(prefix, clientv3.WithPrefix()))
	for _, k := range keys {
		ops = append(ops, clientv3.OpGet(k))
	}
	out := plan.Current{}
	for start := 0; start < len(ops); start += s.maxOps {
		if err := s.readBatch(ctx, ops[start:min(start+s.maxOps, len(ops))], out); err != nil {
			return nil, fmt.Errorf("reading %s: %w", prefix, err)
		}
	}
	return out, nil
}

func (s *Store) readBatch(ctx context.Context, ops []clientv3.Op, out plan.Current) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	resp, err := s.kv.Txn(ctx).Then(ops...).Commit()
	if err != nil {
		return err
	}
	for _, r := range resp.Responses {
		for _, e := range r.GetResponseRange().Kvs {
			out[string(e.Key)] = plan.Decode(e.Value, e.ModRevision)
		}
	}
	return nil
}

// Commit applies one batch of changes in one Txn, conditioned on the fence
// and on every key's mod revision. It returns ErrNotLeader or ErrConflict
// when a condition failed.
func (s *Store) Commit(ctx context.Context, f Fence, batch []plan.Change) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	resp, err := batchTxn(s.kv.Txn(ctx), f, batch).Commit()
	switch {
	case err != nil:
		return err
	case resp.Succeeded:
		return nil
	case f.Key != "" && !fenceHolds(resp, f):
		return ErrNotLeader
	}
	return ErrConflict
}

// batchTxn builds the Txn of a batch: if the fence holds and every key is
// as read, apply the changes; else read the election key.
func batchTxn(txn clientv3.Txn, f Fence, batch []plan.Change) clientv3.Txn {
	cmps := make([]clientv3.Cmp, 0, len(batch)+1)
	if f.Key != "" {
		cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(f.Key), "=", f.Rev))
	}
	ops := make([]clientv3.Op, len(batch))
	for i, c := range batch {
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(c.Key), "=", c.ModRev))
		if c.Value == nil {
			ops[i] = clientv3.OpDelete(c.Key)
		} else {
			ops[i] = clientv3.OpPut(c.Key, string(c.Value))
		}
	}
	txn = txn.If(cmps...).Then(ops...)
	if f.Key != "" {
		txn = txn.Else(clientv3.OpGet(f.Key))
	}
	return txn
}

func fenceHolds(resp *clientv3.TxnResponse, f Fence) bool {
	kvs := resp.Responses[0].GetResponseRange().Kvs
	return len(kvs) == 1 && kvs[0].CreateRevision == f.Rev
}
