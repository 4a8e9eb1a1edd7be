package fastpath

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"
)

// Totals are a Stats' counts summed over its shards at one moment.
type Totals struct {
	stats     *Stats
	answers   []uint64 // by (transport, zone, type, rcode)
	latency   []uint64
	latencyNs []uint64
	sizes     []uint64
	sizeSums  []uint64

	FastAnswers uint64 // answers of the fast path
	Passed      uint64 // queries the fast path passed on to the ordinary path
	Filled      uint64 // answers the caches asked of their source: their misses
	Dropped     uint64 // queries dropped: the ordinary path's queue was full
}

// Histogram is one labelled histogram's totals, in the form
// prometheus.MustNewConstHistogram takes.
type Histogram struct {
	Count      uint64
	Sum        float64
	Cumulative map[float64]uint64 // upper bound → observations at or below it
}

// Totals sums the shards.
func (s *Stats) Totals() Totals {
	t := Totals{stats: s, Dropped: s.dropped.Load()}
	for _, sh := range s.snapshotShards() {
		var answers uint64
		t.answers, answers = addAll(t.answers, sh.answers)
		t.latency, _ = addAll(t.latency, sh.latency)
		t.latencyNs, _ = addAll(t.latencyNs, sh.latencyNs)
		t.sizes, _ = addAll(t.sizes, sh.sizes)
		t.sizeSums, _ = addAll(t.sizeSums, sh.sizeSums)
		t.Passed += sh.passed.Load()
		t.Filled += sh.filled.Load()
		if sh.fast {
			t.FastAnswers += answers
		}
	}
	return t
}

// EachRequest calls f with every (zone, transport, query type) counted so
// far and its count.
func (t Totals) EachRequest(f func(zone string, tr Transport, qtype string, n uint64)) {
	perTransport := t.stats.layout.perTransport
	for tr := range transports {
		requests := make([]uint64, perTransport/len(rcodeNames)) // by (zone, type)
		for i, n := range t.answers[int(tr)*perTransport : int(tr+1)*perTransport] {
			requests[i/len(rcodeNames)] += n
		}
		for i, n := range requests {
			if n > 0 {
				f(t.stats.zones[i/len(qtypeNames)], tr, qtypeNames[i%len(qtypeNames)], n)
			}
		}
	}
}

// EachResponse calls f with every (zone, rcode) counted so far and its
// count.
func (t Totals) EachResponse(f func(zone, rcode string, n uint64)) {
	responses := make([]uint64, len(t.stats.zones)*len(rcodeNames)) // by (zone, rcode)
	perZone := len(qtypeNames) * len(rcodeNames)
	for i, n := range t.answers {
		i %= t.stats.layout.perTransport
		responses[i/perZone*len(rcodeNames)+i%len(rcodeNames)] += n
	}
	for i, n := range responses {
		if n > 0 {
			f(t.stats.zones[i/len(rcodeNames)], rcodeNames[i%len(rcodeNames)], n)
		}
	}
}

// EachLatency calls f with the latency histogram of every (zone, query
// type) counted so far.
func (t Totals) EachLatency(f func(zone, qtype string, h Histogram)) {
	for i, ns := range t.latencyNs {
		per := t.latency[i*(len(timeBounds)+1) : (i+1)*(len(timeBounds)+1)]
		if h := histogram(per, timeBounds, time.Duration(ns).Seconds()); h.Count > 0 {
			f(t.stats.zones[i/len(qtypeNames)], qtypeNames[i%len(qtypeNames)], h)
		}
	}
}

// EachSize calls f with the size histogram of every (zone, proto) whose
// requests (response false) or responses were counted so far.
func (t Totals) EachSize(response bool, f func(zone, proto string, h Histogram)) {
	perDirection := t.stats.layout.responseSizes
	first := 0
	if response {
		first = perDirection
	}
	for i := first; i < first+perDirection; i++ {
		per := t.sizes[i*(len(sizeBounds)+1) : (i+1)*(len(sizeBounds)+1)]
		if h := histogram(per, sizeBounds, float64(t.sizeSums[i])); h.Count > 0 {
			series := i - first
			f(t.stats.zones[series/len(protoNames)], protoNames[series%len(protoNames)], h)
		}
	}
}

// histogram makes a Histogram of per-bucket counts (one more than
// bounds: the last counts what is above them all).
func histogram(per []uint64, bounds []float64, sum float64) Histogram {
	h := Histogram{Sum: sum, Cumulative: make(map[float64]uint64, len(bounds))}
	for i, b := range bounds {
		h.Count += per[i]
		h.Cumulative[b] = h.Count
	}
	h.Count += per[len(bounds)]
	return h
}

// addAll adds the counters to totals (nil: zeros of the same length) and
// returns the sum of what it added.
func addAll(totals []uint64, counters []atomic.Uint64) (_ []uint64, added uint64) {
	if totals == nil {
		totals = make([]uint64, len(counters))
	}
	for i := range counters {
		n := counters[i].Load()
		totals[i] += n
		added += n
	}
	return totals, added
}

func (s *Stats) snapshotShards() []*Shard {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.shards)
}

// The label values: the query types CoreDNS's prometheus plugin names,
// and HTTPS and SVCB, then "other"; every rcode miekg/dns names and
// "other".
var (
	qtypeNames, qtypeIndex = labels(map[uint16]string{
		dns.TypeA: "A", dns.TypeAAAA: "AAAA", dns.TypeCNAME: "CNAME", dns.TypeDNSKEY: "DNSKEY", dns.TypeDS: "DS",
		dns.TypeMX: "MX", dns.TypeNSEC3: "NSEC3", dns.TypeNSEC: "NSEC", dns.TypeNS: "NS", dns.TypePTR: "PTR",
		dns.TypeRRSIG: "RRSIG", dns.TypeSOA: "SOA", dns.TypeSRV: "SRV", dns.TypeTXT: "TXT", dns.TypeIXFR: "IXFR",
		dns.TypeAXFR: "AXFR", dns.TypeANY: "ANY", dns.TypeHTTPS: "HTTPS", dns.TypeSVCB: "SVCB",
	}, "other")
	rcodeNames, rcodeIndex = labels(dns.RcodeToString, "other")
)

// labels returns the names of known, in code order, followed by extra,
// and the index of each code.
func labels[K uint16 | int](known map[K]string, extra ...string) ([]string, map[K]int) {
	codes := make([]K, 0, len(known))
	for code := range known {
		codes = append(codes, code)
	}
	slices.Sort(codes)
	names := make([]string, 0, len(codes)+len(extra))
	index := make(map[K]int, len(codes))
	for i, code := range codes {
		names = append(names, known[code])
		index[code] = i
	}
	return append(names, extra...), index
}
