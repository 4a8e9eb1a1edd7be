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
	p := &pages{kv: kv, name: name, from: from, end: end, size: pageSize, timeout: timeout}
	if err := p.read(ctx, fn); err != nil {
		return nil, err
	}
	return p.first, nil
}

// pages is a paged read of a range at one revision that can resume after
// a failed page: from is the next key to read, and first the header of
// the first page, whose revision every later page is read at.
type pages struct {
	kv       Getter
	name     string
	from     string
	end      string
	size     int64
	timeout  time.Duration
	first    *etcdserverpb.ResponseHeader
	finished bool
}

// read reads pages until the range is done or a page fails; called again
// after a failure, it goes on from the failed page.
func (p *pages) read(ctx context.Context, fn func(*mvccpb.KeyValue)) error {
	for !p.finished {
		opts := []clientv3.OpOption{clientv3.WithRange(p.end), clientv3.WithLimit(p.size)}
		if p.first != nil {
			opts = append(opts, clientv3.WithRev(p.first.Revision))
		}
		resp, err := getWithin(ctx, p.kv, p.timeout, p.from, opts...)
		if err != nil {
			return fmt.Errorf("listing %s: %w", p.name, err)
		}
		if p.first == nil {
			p.first = resp.Header
		}
		for _, e := range resp.Kvs {
			fn(e)
		}
		p.finished = !resp.More || len(resp.Kvs) == 0
		if !p.finished {
			p.from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
		}
	}
	return nil
}

// getWithin is one Get bounded by timeout.
func getWithin(ctx context.Context, kv Getter, timeout time.Duration, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return kv.Get(ctx, key, opts...)
}
