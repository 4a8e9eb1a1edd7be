package fastpath

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"
)

// Stats counts answered queries by query type and response code, and how
// long they took by transport, with no lock or label lookup on the way:
// every goroutine that answers owns a Shard and adds to it with atomic
// operations on memory no other goroutine writes; readers sum the shards.
type Stats struct {
	bounds []float64 // the latency histogram's upper bounds, in seconds

	dropped atomic.Uint64 // queries the ordinary path had no room for

	mu     sync.Mutex // guards shards
	shards []*Shard
}

// Shard is one goroutine's part of a Stats.
type Shard struct {
	fast    bool            // a fast-path reader's
	bounds  []float64       // the Stats' bounds
	answers []atomic.Uint64 // by statIndex
	latency [len(protos)]histogram
	passed  atomic.Uint64 // queries passed on to the ordinary path
	filled  atomic.Uint64 // answers asked of the Answers source
}

// histogram is one transport's latencies.
type histogram struct {
	counts []atomic.Uint64 // per bound, and one past the last
	sumNs  atomic.Uint64
}

// protos are the transports, in Shard.latency's order.
var protos = [...]string{"udp", "tcp"}

// NewStats returns an empty Stats whose latency histograms have the given
// upper bounds, in seconds, increasing.
func NewStats(bounds []float64) *Stats {
	return &Stats{bounds: slices.Clone(bounds)}
}

// NewShard adds a shard for one goroutine; fast says whether the fast
// path answers through it.
func (s *Stats) NewShard(fast bool) *Shard {
	sh := &Shard{fast: fast, bounds: s.bounds, answers: make([]atomic.Uint64, len(qtypeNames)*len(rcodeNames))}
	for i := range sh.latency {
		sh.latency[i].counts = make([]atomic.Uint64, len(s.bounds)+1)
	}
	s.mu.Lock()
	s.shards = append(s.shards, sh)
	s.mu.Unlock()
	return sh
}

// Count counts one answer to a question of type qtype (hasQuestion false:
// a message without one) with the given rcode.
func (sh *Shard) Count(qtype uint16, hasQuestion bool, rcode int) {
	if !hasQuestion {
		sh.add(labelIndex(noQuestion, rcode))
		return
	}
	sh.add(statIndex(qtype, rcode))
}

func (sh *Shard) add(i int32) { sh.answers[i].Add(1) }

func (sh *Shard) pass() { sh.passed.Add(1) }

func (sh *Shard) fill() { sh.filled.Add(1) }

// Observe records that n queries over proto ("udp" or "tcp") took d each.
func (sh *Shard) Observe(proto string, d time.Duration, n int) {
	h := &sh.latency[protoIndex(proto)]
	i, _ := slices.BinarySearch(sh.bounds, d.Seconds())
	h.counts[i].Add(uint64(n))
	h.sumNs.Add(uint64(d) * uint64(n))
}

// Bounds are the latency histogram's upper bounds, in seconds.
func (s *Stats) Bounds() []float64 { return s.bounds }

func protoIndex(proto string) int {
	if proto == protos[1] {
		return 1
	}
	return 0
}

// EachAnswer calls f with every (qtype, rcode) label pair counted so far and
// its total over the shards.
func (s *Stats) EachAnswer(f func(qtype, rcode string, n uint64)) {
	totals := make([]uint64, len(qtypeNames)*len(rcodeNames))
	for _, sh := range s.snapshotShards() {
		for i := range sh.answers {
			totals[i] += sh.answers[i].Load()
		}
	}
	for i, n := range totals {
		if n > 0 {
			f(qtypeNames[i/len(rcodeNames)], rcodeNames[i%len(rcodeNames)], n)
		}
	}
}

// Latency returns proto's histogram summed over the shards: the number of
// queries, their total seconds, and the cumulative count per bound.
func (s *Stats) Latency(proto string) (count uint64, sum float64, cumulative map[float64]uint64) {
	per := make([]uint64, len(s.bounds)+1)
	var sumNs uint64
	for _, sh := range s.snapshotShards() {
		h := &sh.latency[protoIndex(proto)]
		for i := range h.counts {
			per[i] += h.counts[i].Load()
		}
		sumNs += h.sumNs.Load()
	}
	cumulative = make(map[float64]uint64, len(s.bounds))
	for i, b := range s.bounds {
		count += per[i]
		cumulative[b] = count
	}
	return count + per[len(s.bounds)], time.Duration(sumNs).Seconds(), cumulative
}

// FastAnswers is the number of queries the fast path answered.
func (s *Stats) FastAnswers() uint64 {
	var n uint64
	for _, sh := range s.snapshotShards() {
		for i := range sh.answers {
			if sh.fast {
				n += sh.answers[i].Load()
			}
		}
	}
	return n
}

// Passed is the number of queries the fast path passed on to the ordinary
// path.
func (s *Stats) Passed() uint64 {
	var n uint64
	for _, sh := range s.snapshotShards() {
		n += sh.passed.Load()
	}
	return n
}

// Filled is the number of answers the caches asked of their source: their
// misses.
func (s *Stats) Filled() uint64 {
	var n uint64
	for _, sh := range s.snapshotShards() {
		n += sh.filled.Load()
	}
	return n
}

// Dropped is the number of queries the fast path dropped because the
// ordinary path had a full queue of them already.
func (s *Stats) Dropped() uint64 { return s.dropped.Load() }

func (s *Stats) snapshotShards() []*Shard {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.shards)
}

// The label values: every query type miekg/dns names, "other" and "none";
// every rcode it names and "other".
var (
	qtypeNames, qtypeIndex = labels(dns.TypeToString, "other", "none")
	rcodeNames, rcodeIndex = labels(dns.RcodeToString, "other")
	noQuestion             = len(qtypeNames) - 1
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

// statIndex is the answers counter of (qtype, rcode).
func statIndex(qtype uint16, rcode int) int32 {
	qi, ok := qtypeIndex[qtype]
	if !ok {
		qi = len(qtypeNames) - 2 // other
	}
	return labelIndex(qi, rcode)
}

// labelIndex is the answers counter of the qtype label qi and rcode.
func labelIndex(qi, rcode int) int32 {
	ri, ok := rcodeIndex[rcode]
	if !ok {
		ri = len(rcodeNames) - 1 // other
	}
	return int32(qi*len(rcodeNames) + ri)
}
