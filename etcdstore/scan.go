package etcdstore

import (
	"context"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Getter is the part of an etcd client a Scan uses; clientv3.KV has it.
type Getter interface {
	Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error)
}

// Scan reads every key under prefix at one revision, pageSize keys per
// request (each bounded by timeout), and calls fn with each in key order, so
// that a caller keeping only some of them never holds them all. It returns
// the header of the first page, whose revision every page was read at.
func Scan(ctx context.Context, kv Getter, prefix string, pageSize int64, timeout time.Duration, fn func(*mvccpb.KeyValue)) (*etcdserverpb.ResponseHeader, error) {
	return scan(ctx, kv, prefix, prefix, clientv3.GetPrefixRangeEnd(prefix), pageSize, timeout, fn)
}

// ScanRange is Scan over the keys from from (included) to end (excluded).
func ScanRange(ctx context.Context, kv Getter, from, end string, pageSize int64, timeout time.Duration, fn func(*mvccpb.KeyValue)) (*etcdserverpb.ResponseHeader, error) {
	return scan(ctx, kv, fmt.Sprintf("%s to %s", from, end), from, end, pageSize, timeout, fn)
}

// scan is Scan and ScanRange; name is what its errors call the range.
func scan(ctx context.Context, kv Getter, name, from, end string, pageSize int64, timeout time.Duration, fn func(*mvccpb.KeyValue)) (*etcdserverpb.ResponseHeader, error) {
	var first *etcdserverpb.ResponseHeader
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(pageSize)}
		if first != nil {
			opts = append(opts, clientv3.WithRev(first.Revision))
		}
		resp, err := getWithin(ctx, kv, timeout, from, opts...)
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", name, err)
		}
		if first == nil {
			first = resp.Header
		}
		for _, e := range resp.Kvs {
			fn(e)
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return first, nil
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// getWithin is one Get bounded by timeout.
func getWithin(ctx context.Context, kv Getter, timeout time.Duration, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return kv.Get(ctx, key, opts...)
}
