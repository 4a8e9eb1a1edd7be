package skydns

import (
	"log/slog"
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/skydns/dnsserver"
	"github.com/kubesky/kubesky/skydns/fastpath"
	"github.com/kubesky/kubesky/skydns/resolver"
	"github.com/kubesky/kubesky/skydns/snapshot/snapshottest"
)

// benchQueries are packed A queries for the 10k services of benchPaths,
// in mixed case, with EDNS.
func benchQueries(b *testing.B) [][]byte {
	b.Helper()
	out := make([][]byte, 10_000)
	for i := range out {
		m := new(dns.Msg).SetQuestion(mixCase(snapshottest.ServiceName(i), uint64(i)*0x9e3779b97f4a7c15), dns.TypeA)
		m.SetEdns0(1232, false)
		packed, err := m.Pack()
		if err != nil {
			b.Fatal(err)
		}
		out[i] = packed
	}
	return out
}

// benchPaths are the ordinary path (router) and the fast path's Source
// (cacheFiller) over a snapshot of 10k ClusterIP services.
func benchPaths(b *testing.B) (*router, *cacheFiller) {
	b.Helper()
	res, err := resolver.New(resolver.Config{Zones: []string{"cluster.local."}})
	if err != nil {
		b.Fatal(err)
	}
	m := NewMirror(contract.DefaultPrefix, nil, slog.New(slog.DiscardHandler))
	m.apply(snapshottest.Cluster(contract.DefaultPrefix, 10_000))
	return &router{resolver: res, mirror: m, forwarder: Refuse},
		&cacheFiller{resolver: res, mirror: m, maxUDPSize: dnsserver.DefaultMaxUDPSize}
}

// BenchmarkFastPath answers A queries for 10k services from a warm cache
// (hit) and from one emptied every round (miss: the ordinary path runs
// once per name and its answer is kept).
func BenchmarkFastPath(b *testing.B) {
	_, filler := benchPaths(b)
	queries := benchQueries(b)
	out := make([]byte, 0, dnsserver.DefaultMaxUDPSize)
	for _, bc := range []struct {
		name    string
		entries int
	}{{"hit", len(queries)}, {"miss", 1}} {
		b.Run(bc.name, func(b *testing.B) {
			c := fastpath.NewCache(fastpath.CacheConfig{Source: filler, MaxUDPSize: dnsserver.DefaultMaxUDPSize,
				MaxEntries: bc.entries, Stats: fastpath.NewStats().NewShard(true)})
			for _, q := range queries {
				c.Reply(out, q, nil)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, _, ok := c.Reply(out, queries[i%len(queries)], nil); !ok {
					b.Fatal("not answered")
				}
				i++
			}
		})
	}
}

// BenchmarkOrdinaryPath is the ordinary path for the same queries: unpack,
// answer, EDNS and truncation, pack.
func BenchmarkOrdinaryPath(b *testing.B) {
	router, _ := benchPaths(b)
	queries := benchQueries(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		ordinaryReply(b, router, queries[i%len(queries)])
		i++
	}
}
