package gendata

import (
	"context"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// TxnMaxOps is etcd's default limit of operations in one transaction.
const TxnMaxOps = 128

// Txner is the part of an etcd client Load uses.
type Txner interface {
	Txn(ctx context.Context) clientv3.Txn
}

var _ Txner = (*clientv3.Client)(nil)

// Load writes kvs into etcd in transactions of at most batch puts (0 means
// TxnMaxOps), each with a 10s deadline, and returns the revision of the
// last one.
func Load(ctx context.Context, c Txner, kvs []KV, batch int) (int64, error) {
	if batch <= 0 || batch > TxnMaxOps {
		batch = TxnMaxOps
	}
	var rev int64
	for start := 0; start < len(kvs); start += batch {
		end := min(start+batch, len(kvs))
		r, err := put(ctx, c, kvs[start:end])
		if err != nil {
			return rev, err
		}
		rev = r
	}
	return rev, nil
}

func put(ctx context.Context, c Txner, kvs []KV) (int64, error) {
	ops := make([]clientv3.Op, len(kvs))
	for i, kv := range kvs {
		ops[i] = clientv3.OpPut(kv.Key, kv.Value)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := c.Txn(ctx).Then(ops...).Commit()
	if err != nil {
		return 0, fmt.Errorf("writing %d keys from %s: %w", len(kvs), kvs[0].Key, err)
	}
	return resp.Header.Revision, nil
}
