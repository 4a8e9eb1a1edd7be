package skydns

import (
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/skydns/dnssec"
	"github.com/kubesky/kubesky/skydns/dnsserver"
	"github.com/kubesky/kubesky/skydns/fastpath"
)

// signedBenchPaths are benchPaths with cluster.local. signed by a new CSK.
func signedBenchPaths(b *testing.B) (*router, *cacheFiller) {
	b.Helper()
	_, k := newTestKey(b, b.TempDir(), "cluster.local.")
	router, filler := benchPaths(b)
	signer, names := dnssec.New(dnssec.Config{Keys: []dnssec.Key{k}}), newZoneNames(router.resolver)
	router.signer, router.names = signer, names
	filler.signer, filler.names = signer, names
	return router, filler
}

// withDO is the packed queries with the DO bit set.
func withDO(queries [][]byte) [][]byte {
	out := make([][]byte, len(queries))
	for i, q := range queries {
		m := new(dns.Msg)
		if err := m.Unpack(q); err != nil {
			panic(err)
		}
		m.IsEdns0().SetDo()
		out[i], _ = m.Pack()
	}
	return out
}

// BenchmarkSignedFastPath answers the A queries of BenchmarkFastPath from
// a warm cache in a signed zone, without the DO bit (unsigned answers)
// and with it (the signed answers, RRSIG included): the two cost the same
// copy and patch, the signed answer being longer.
func BenchmarkSignedFastPath(b *testing.B) {
	_, filler := signedBenchPaths(b)
	forBothKinds(b, func(b *testing.B, queries [][]byte) { benchWarmCache(b, filler, queries) })
}

// forBothKinds runs bench as "unsigned" with benchQueries and as "signed"
// with them and the DO bit.
func forBothKinds(b *testing.B, bench func(b *testing.B, queries [][]byte)) {
	plain := benchQueries(b)
	b.Run("unsigned", func(b *testing.B) { bench(b, plain) })
	b.Run("signed", func(b *testing.B) { bench(b, withDO(plain)) })
}

func benchWarmCache(b *testing.B, filler *cacheFiller, queries [][]byte) {
	out := make([]byte, 0, dnsserver.DefaultMaxUDPSize)
	c := fastpath.NewCache(fastpath.CacheConfig{Source: filler, MaxUDPSize: dnsserver.DefaultMaxUDPSize,
		MaxEntries: len(queries), Stats: fastpath.NewStats().NewShard(true)})
	c.Refresh()
	for _, q := range queries {
		c.Reply(out, q, nil)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if !warmReply(c, out, queries, i) {
			b.Fatal("not answered")
		}
		i++
	}
}

// warmReply answers the i-th query of a warm cache's loop, refreshing the
// cache before each 64 as a reader does before each batch. It is kept out
// of line so that callgrind can count the measured replies alone:
// valgrind --tool=callgrind --collect-atstart=no '--toggle-collect=*skydns.warmReply' ./skydns.test
// -test.run '^$' -test.bench 'BenchmarkSignedFastPath/signed$' -test.benchtime 100000x;
// the total divided by the calls that callgrind_annotate --tree=caller
// counts (the loop may run more than once) is the cost of one reply.
//
//go:noinline
func warmReply(c *fastpath.Cache, out []byte, queries [][]byte, i int) bool {
	if i%64 == 0 {
		c.Refresh()
	}
	_, _, ok := c.Reply(out, queries[i%len(queries)], nil)
	return ok
}

// BenchmarkSignedOrdinaryPath is BenchmarkOrdinaryPath in a signed zone,
// without and with the DO bit, once every RRset's signature is kept.
func BenchmarkSignedOrdinaryPath(b *testing.B) {
	router, _ := signedBenchPaths(b)
	forBothKinds(b, func(b *testing.B, queries [][]byte) {
		for _, q := range queries { // warm: every signature made
			ordinaryReply(b, router, q)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			measuredOrdinaryReply(b, router, queries[i%len(queries)])
			i++
		}
	})
}

// measuredOrdinaryReply is ordinaryReply kept out of line, so that
// callgrind can count the measured replies alone, without the warm-up
// (as warmReply).
//
//go:noinline
func measuredOrdinaryReply(b *testing.B, r *router, q []byte) { ordinaryReply(b, r, q) }

// ordinaryReply unpacks q, answers it on the ordinary path and packs the
// answer (as BenchmarkOrdinaryPath does).
func ordinaryReply(b *testing.B, r *router, q []byte) {
	req := new(dns.Msg)
	if err := req.Unpack(q); err != nil {
		b.Fatal(err)
	}
	resp := dnsserver.Reply(b.Context(), r, dnsserver.Query{Msg: req, Proto: "udp"}, dnsserver.DefaultMaxUDPSize)
	if _, err := resp.Pack(); err != nil {
		b.Fatal(err)
	}
}
