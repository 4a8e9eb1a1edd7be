package etcdstore_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/proxy/grpcproxy"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/kubesky/kubesky/etcdstore"
	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/polltest"
)

// startGRPCProxy serves etcd's grpc-proxy (its KV and Watch services) in
// front of upstream on 127.0.0.1, until the test ends, and returns its URL.
func startGRPCProxy(t *testing.T, upstream *clientv3.Client) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	kv, _ := grpcproxy.NewKvProxy(upstream)
	watch, _ := grpcproxy.NewWatchProxy(t.Context(), zap.NewNop(), upstream)
	srv := grpc.NewServer()
	pb.RegisterKVServer(srv, kv)
	pb.RegisterWatchServer(srv, watch)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return "http://" + lis.Addr().String()
}

// leaveADeadWatch opens a watch of /skydns/ through the proxy from a
// compacted revision and keeps it open without reading on: the proxy's
// upstream watch of that range ends with the compaction, and the proxy
// keeps it, with this watch in it, for newer watches to join.
func leaveADeadWatch(t *testing.T, proxy *clientv3.Client, compacted int64) {
	t.Helper()
	stream, err := pb.NewWatchClient(proxy.ActiveConnection()).Watch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	create := &pb.WatchCreateRequest{Key: []byte("/skydns/"), RangeEnd: []byte(clientv3.GetPrefixRangeEnd("/skydns/")), StartRevision: compacted}
	if err := stream.Send(&pb.WatchRequest{RequestUnion: &pb.WatchRequest_CreateRequest{CreateRequest: create}}); err != nil {
		t.Fatal(err)
	}
	for {
		resp, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if resp.CompactRevision != 0 {
			return
		}
	}
}

// TestAWatchASilentGRPCProxyHoldsMovesToAnotherRange: a grpc-proxy keeps
// an upstream watch that a compaction ended and moves the watches of the
// same range into it, where nothing arrives. The ListWatcher's watch,
// silent there while etcd answers, opens again over another range with the
// same keys and gets the changes.
func TestAWatchASilentGRPCProxyHoldsMovesToAnotherRange(t *testing.T) {
	srv := etcdtest.StartWithProgressNotify(t, 100*time.Millisecond)
	proxy := etcdtest.NewClient(t, startGRPCProxy(t, srv.Client))
	first := srv.Put(t, "/skydns/a", "1")
	rec := startStallWatching(t, proxy)
	// Through the proxy, progress notifications start with the first event.
	srv.Put(t, "/skydns/a", "2")
	polltest.True(t, "a change", func() bool { v, _ := rec.get("/skydns/a"); return v == "2" })
	awaitProgressNotifications(t, rec)

	latest := srv.Put(t, "/skydns/a", "3")
	if _, err := srv.Client.Compact(context.Background(), latest); err != nil {
		t.Fatal(err)
	}
	leaveADeadWatch(t, proxy, first)
	srv.Put(t, "/skydns/a", "4")
	srv.Put(t, "/skydns0", "a key beyond the prefix, inside the watch's other ranges")
	srv.Put(t, "/skydns0\x00", "another")
	srv.Put(t, "/skydns/b", "5")
	polltest.True(t, "the changes made after the compaction", func() bool {
		a, _ := rec.get("/skydns/a")
		b, _ := rec.get("/skydns/b")
		return a == "4" && b == "5"
	})
	if _, _, n := rec.snapshot(); n != 2 {
		t.Errorf("the mirror holds %d keys, want the 2 under /skydns/", n)
	}
}

// watchStarts is an etcd client that notes the start revision of each
// watch opened through it once noting is on.
type watchStarts struct {
	etcdstore.Source
	noting atomic.Bool
	mu     sync.Mutex
	starts []int64
}

func (w *watchStarts) Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan {
	if w.noting.Load() {
		w.mu.Lock()
		w.starts = append(w.starts, clientv3.OpGet(key, opts...).Rev())
		w.mu.Unlock()
	}
	return w.Source.Watch(ctx, key, opts...)
}

// TestACompactedRevisionIsListedAgainWithoutAWatchFromIt: a reader cut off
// while its revision is compacted asks etcd before watching again, and
// lists, so no watch from a compacted revision reaches a grpc-proxy, where
// it would leave behind an upstream watch that later watches join and
// stay silent in.
func TestACompactedRevisionIsListedAgainWithoutAWatchFromIt(t *testing.T) {
	srv := etcdtest.Start(t)
	srv.Put(t, "/skydns/a", "1")
	gate := &etcdtest.Gate{Client: srv.Client}
	src := &watchStarts{Source: gate}
	rec := startRelistingAtOnce(t, src)

	gate.Hold()
	srv.Put(t, "/skydns/a", "2")
	compacted := srv.Put(t, "/skydns/a", "3")
	if _, err := srv.Client.Compact(context.Background(), compacted); err != nil {
		t.Fatal(err)
	}
	src.noting.Store(true)
	gate.Release()
	polltest.True(t, "the list after the compaction", func() bool { v, _ := rec.get("/skydns/a"); return v == "3" })
	srv.Put(t, "/skydns/a", "4")
	polltest.True(t, "a change watched after it", func() bool { v, _ := rec.get("/skydns/a"); return v == "4" })
	src.mu.Lock()
	defer src.mu.Unlock()
	if len(src.starts) == 0 {
		t.Fatal("no watch opened after the release")
	}
	for _, start := range src.starts {
		if start <= compacted {
			t.Errorf("a watch from revision %d opened after the compaction at %d (watches opened: %v)", start, compacted, src.starts)
		}
	}
}

// proxyCache reads a grpc-proxy's cache counters (hits or misses) from
// the default Prometheus registry, where the grpcproxy package puts them.
func proxyCache(t *testing.T, counter string) float64 {
	t.Helper()
	families, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "etcd_grpc_proxy_cache_"+counter+"_total" {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no etcd_grpc_proxy_cache_%s_total", counter)
	return 0
}

// TestASecondReaderIsListedFromTheProxysCache: two readers listing the
// same revision through a grpc-proxy send the same requests, and the
// proxy answers the second one's 4 pages from its cache.
func TestASecondReaderIsListedFromTheProxysCache(t *testing.T) {
	srv := etcdtest.Start(t)
	for i := range 7 {
		srv.Put(t, fmt.Sprintf("/skydns/local/k%d", i), "v")
	}
	proxy := etcdtest.NewClient(t, startGRPCProxy(t, srv.Client))
	first := startListWatch(t, proxy, 2)
	polltest.True(t, "the first reader's sync", func() bool { _, s, n := first.snapshot(); return s.Synced && n == 7 })
	hits, misses := proxyCache(t, "hits"), proxyCache(t, "misses")

	second := startListWatch(t, proxy, 2)
	polltest.True(t, "the second reader's sync", func() bool { _, s, n := second.snapshot(); return s.Synced && n == 7 })
	if h, m := proxyCache(t, "hits")-hits, proxyCache(t, "misses")-misses; h != 4 || m != 0 {
		t.Errorf("the second list's 4 pages: %v cache hits and %v misses, want 4 and 0", h, m)
	}
}

// TestAProxysCacheOfAReplacedClusterIsNotListed: the etcd behind a
// grpc-proxy is replaced by a new cluster whose revisions reach the same
// numbers. The proxy's cache still holds the old cluster's pages for the
// requests the reader's list sends; the reader notices whose they are,
// and lists the new cluster's keys without the cache.
func TestAProxysCacheOfAReplacedClusterIsNotListed(t *testing.T) {
	old := etcdtest.Start(t)
	for i := range 7 {
		old.Put(t, fmt.Sprintf("/skydns/local/k%d", i), "old")
	}
	proxy := etcdtest.NewClient(t, startGRPCProxy(t, etcdtest.NewClient(t, old.ClientURL())))
	rec := startListWatch(t, proxy, 2)
	polltest.True(t, "sync", func() bool { _, s, n := rec.snapshot(); return s.Synced && n == 7 })

	url := old.ClientURL()
	old.Stop()
	replaced := etcdtest.StartAt(t, url)
	for i := range 7 {
		replaced.Put(t, fmt.Sprintf("/skydns/local/k%d", i), "new")
	}
	polltest.True(t, "the new cluster's values", func() bool {
		for i := range 7 {
			if v, _ := rec.get(fmt.Sprintf("/skydns/local/k%d", i)); v != "new" {
				return false
			}
		}
		return true
	})
}
