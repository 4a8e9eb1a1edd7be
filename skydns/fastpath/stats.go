package fastpath

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Stats counts answered queries with no lock, map or label lookup on the
// way: every goroutine that answers owns a Shard (the ordinary path's
// goroutines share one) and adds to fixed arrays indexed by the answer's
// labels; readers sum the shards. The labels are those of CoreDNS's
// prometheus plugin: per (transport, family, zone, query type) for
// requests, (zone, rcode) for responses, (zone, query type) for latency
// and (zone, transport) for message sizes, with CoreDNS's buckets.
type Stats struct {
	zones     []string       // the zone label's values; the last is "." (outside the zones)
	zoneIndex map[string]int // of zones
	layout    layout

	dropped atomic.Uint64 // queries the ordinary path had no room for

	mu     sync.Mutex // guards shards
	shards []*Shard
}

// layout is where a Shard's arrays keep each labelled count.
type layout struct {
	perTransport  int // answers counters of one transport: zones × types × rcodes
	responseSizes int // the first response size histogram (those before are requests')
}

// Shard is one goroutine's part of a Stats.
type Shard struct {
	fast      bool // a fast-path reader's
	stats     *Stats
	layout    layout
	answers   []atomic.Uint64 // by (transport, zone, type, rcode): requests and responses both
	latency   []atomic.Uint64 // by (zone, type, time bucket)
	latencyNs []atomic.Uint64 // by (zone, type)
	sizes     []atomic.Uint64 // by (direction, zone, proto, size bucket)
	sizeSums  []atomic.Uint64 // by (direction, zone, proto)
	passed    atomic.Uint64   // queries passed on to the ordinary path
	filled    atomic.Uint64   // answers asked of the Source
}

// Series is what an answer is counted under besides how it travelled —
// the served zone its name is in, its query type and its rcode — as the
// positions of its counters, so that counting one is a few additions. A
// Stats makes them (Stats.Series); the zero Series is a NOERROR answer to
// an A query in the first zone.
type Series struct {
	answer  uint32 // in answers, for the first transport: (zone, type, rcode)
	latency uint16 // the latency histogram: (zone, type)
	sizes   uint16 // the zone's first (UDP) request size histogram
}

// Transport is how a query came: its protocol and address family.
type Transport uint8

// The transports, in the order the requests are counted.
const (
	UDP4 Transport = iota
	UDP6
	TCP4
	TCP6
	transports
)

// NewTransport is the transport of a query over TCP or UDP from an IPv6
// or IPv4 address.
func NewTransport(tcp, ipv6 bool) Transport {
	t := UDP4
	if tcp {
		t = TCP4
	}
	if ipv6 {
		t++
	}
	return t
}

// Proto is t's proto label: "udp" or "tcp".
func (t Transport) Proto() string { return protoNames[t/2] }

// Family is t's family label: "1" (IPv4) or "2" (IPv6).
func (t Transport) Family() string { return familyNames[t%2] }

var (
	protoNames  = [...]string{"udp", "tcp"}
	familyNames = [...]string{"1", "2"}
)

// Bucket upper bounds, as CoreDNS's prometheus plugin has them: request
// latency from 0.25 ms doubling to 8.192 s, message sizes in bytes.
var (
	timeBounds = doublingBounds()
	sizeBounds = []float64{0, 100, 200, 300, 400, 511, 1023, 2047, 4095, 8291, 16e3, 32e3, 48e3, 64e3}

	timeBoundsNs  = durationsNs(timeBounds)
	sizeBoundsInt = intBounds(sizeBounds)
)

// OutsideZones is the zone label of names in no served zone (forwarded).
const OutsideZones = "."

// maxZones is the most zones a Stats labels (a Series holds positions in
// 16 bits); names in more are counted in zone ".".
const maxZones = 3000

// NewStats returns an empty Stats for the served zones (fully qualified,
// lower case); names outside them are counted in zone ".".
func NewStats(zones ...string) *Stats {
	zones = zones[:min(len(zones), maxZones)]
	s := &Stats{zones: append(slices.Clone(zones), OutsideZones), zoneIndex: make(map[string]int, len(zones))}
	for i, z := range zones {
		s.zoneIndex[z] = i
	}
	perZone := len(qtypeNames) * len(rcodeNames)
	s.layout = layout{perTransport: len(s.zones) * perZone, responseSizes: len(s.zones) * len(protoNames)}
	return s
}

// NewShard adds a shard for one goroutine (or, with atomic adds, several);
// fast says whether the fast path answers through it.
func (s *Stats) NewShard(fast bool) *Shard {
	latencySeries := len(s.zones) * len(qtypeNames)
	sizeSeries := 2 * s.layout.responseSizes
	sh := &Shard{fast: fast, stats: s, layout: s.layout,
		answers:   make([]atomic.Uint64, int(transports)*s.layout.perTransport),
		latency:   make([]atomic.Uint64, latencySeries*(len(timeBounds)+1)),
		latencyNs: make([]atomic.Uint64, latencySeries),
		sizes:     make([]atomic.Uint64, sizeSeries*(len(sizeBounds)+1)),
		sizeSums:  make([]atomic.Uint64, sizeSeries),
	}
	s.mu.Lock()
	s.shards = append(s.shards, sh)
	s.mu.Unlock()
	return sh
}

// Zones are the zone label's values, "." last.
func (s *Stats) Zones() []string { return s.zones }

// Series is the Series of an answer with rcode to a question of type
// qtype (hasQuestion false: a message without one, counted as "other")
// for a name in zone ("" or a zone not served: ".").
func (s *Stats) Series(zone string, qtype uint16, hasQuestion bool, rcode int) Series {
	zi, ok := s.zoneIndex[zone]
	if !ok {
		zi = len(s.zones) - 1
	}
	qi, ok := qtypeIndex[qtype]
	if !ok || !hasQuestion {
		qi = len(qtypeNames) - 1
	}
	ri, ok := rcodeIndex[rcode]
	if !ok {
		ri = len(rcodeNames) - 1
	}
	return Series{
		answer:  uint32((zi*len(qtypeNames)+qi)*len(rcodeNames) + ri),
		latency: uint16(zi*len(qtypeNames) + qi),
		sizes:   uint16(zi * len(protoNames)),
	}
}

// Answered counts one answer of series to a request of reqSize bytes that
// came over t, with a response of respSize bytes.
func (sh *Shard) Answered(s Series, t Transport, reqSize, respSize int) {
	sh.answers[int(t)*sh.layout.perTransport+int(s.answer)].Add(1)
	sized := int(s.sizes) + int(t/2) // t/2: the proto
	sh.addSize(sized, reqSize)
	sh.addSize(sh.layout.responseSizes+sized, respSize)
}

// addSize adds a message of n bytes to the size histogram i.
func (sh *Shard) addSize(i, n int) {
	sh.sizes[i*(len(sizeBounds)+1)+sizeBucket(n)].Add(1)
	sh.sizeSums[i].Add(uint64(n))
}

// Took records that answering a query of series took d.
func (sh *Shard) Took(s Series, d time.Duration) {
	sh.tookIn(s, timeBucket(d), uint64(d))
}

// TookEach records that answering each query of series took d: a batch
// of queries answered together.
func (sh *Shard) TookEach(series []Series, d time.Duration) {
	b := timeBucket(d)
	for _, s := range series {
		sh.tookIn(s, b, uint64(d))
	}
}

func (sh *Shard) tookIn(s Series, bucket int, ns uint64) {
	sh.latency[int(s.latency)*(len(timeBounds)+1)+bucket].Add(1)
	sh.latencyNs[s.latency].Add(ns)
}

func (sh *Shard) pass() { sh.passed.Add(1) }

func (sh *Shard) fill() { sh.filled.Add(1) }

// sizeBucket is the size histogram bucket of n bytes: looked up for the
// sizes of nearly every query and UDP answer, searched for the rest.
func sizeBucket(n int) int {
	if n >= 0 && n < len(smallSizeBuckets) {
		return int(smallSizeBuckets[n])
	}
	for i, b := range sizeBoundsInt {
		if n <= b {
			return i
		}
	}
	return len(sizeBoundsInt)
}

// smallSizeBuckets is the size bucket of every size up to 511 bytes.
var smallSizeBuckets = func() (buckets [512]uint8) {
	for n := range buckets {
		i, _ := slices.BinarySearch(sizeBoundsInt, n)
		buckets[n] = uint8(i)
	}
	return buckets
}()

func timeBucket(d time.Duration) int {
	i, _ := slices.BinarySearch(timeBoundsNs, int64(d))
	return i
}

func doublingBounds() []float64 {
	bounds := make([]float64, 16)
	for i := range bounds {
		bounds[i] = 0.00025 * float64(int(1)<<i)
	}
	return bounds
}

func durationsNs(seconds []float64) []int64 {
	ns := make([]int64, len(seconds))
	for i, s := range seconds {
		ns[i] = int64(s * 1e9)
	}
	return ns
}

func intBounds(bounds []float64) []int {
	ints := make([]int, len(bounds))
	for i, b := range bounds {
		ints[i] = int(b)
	}
	return ints
}
