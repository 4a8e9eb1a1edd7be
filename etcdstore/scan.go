package etcdstore

import (
	"cmp"
	"context"
	"errors"
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

// Scan reads every key under prefix at one revision, in pages (each request
// bounded by timeout), and calls fn with each in key order, so that a
// caller keeping only some of them never holds them all. The first page
// holds pageSize keys; the later ones grow so that the rest takes at most
// laterPages requests (see pages.grow). It returns the header of the first
// page, whose revision every page was read at.
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
// the first page. The revision is the one asked for, or, when that is 0,
// the first page's, which every later page is then read at.
type pages struct {
	kv           Getter
	name         string
	from         string
	end          string
	size         int64
	timeout      time.Duration
	revision     int64
	serializable bool
	cluster      uint64 // the etcd cluster every page must come from; 0: any
	first        *etcdserverpb.ResponseHeader
	total        int64 // keys in the range, as the first page counted them
	finished     bool
}

// read reads pages until the range is done or a page fails; called again
// after a failure, it goes on from the failed page.
func (p *pages) read(ctx context.Context, fn func(*mvccpb.KeyValue)) error {
	for !p.finished {
		opts := []clientv3.OpOption{clientv3.WithRange(p.end), clientv3.WithLimit(p.size), clientv3.WithRev(p.revision)}
		if p.serializable {
			opts = append(opts, clientv3.WithSerializable())
		}
		resp, err := getWithin(ctx, p.kv, p.timeout, p.from, opts...)
		if err != nil {
			return fmt.Errorf("listing %s: %w", p.name, err)
		}
		if p.cluster != 0 && resp.Header.ClusterId != p.cluster {
			return fmt.Errorf("listing %s: %w (cluster %x, not %x)", p.name, errCachedElsewhere, resp.Header.ClusterId, p.cluster)
		}
		if p.first == nil {
			p.first = resp.Header
			p.revision = cmp.Or(p.revision, resp.Header.Revision)
			p.total = resp.Count
			p.grow(resp.Count)
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

// errCachedElsewhere says that a page came from another etcd cluster than
// the one asked: a grpc-proxy's cache answered with what an earlier
// cluster behind it said.
var errCachedElsewhere = errors.New("a page came from another etcd cluster")

// laterPages bounds the requests a paged read makes after its first page.
const laterPages = 8

// grow sizes the pages after the first from the count of keys in the
// range. etcd counts the rest of the range on every request with a limit,
// visiting each of its keys in the index, so fixed pages cost it time in
// the square of the keys: a list of 300,000 keys in pages of 1,000 costs
// it about 5 times the CPU of one in pages of 10,000. With at most
// laterPages later pages the count walks each key a bounded number of
// times, and no response holds more than about an eighth of the range.
func (p *pages) grow(total int64) {
	p.size = max(p.size, (total+laterPages-1)/laterPages)
}

// getWithin is one Get bounded by timeout.
func getWithin(ctx context.Context, kv Getter, timeout time.Duration, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return kv.Get(ctx, key, opts...)
}
