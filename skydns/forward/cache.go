package forward

import (
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/miekg/dns"
)

// defaultMaxTTL caps the TTLs of answers when Config.MaxTTL is 0.
const defaultMaxTTL = time.Hour

// staleTTL is the TTL of every record of a stale answer (RFC 8767, 4).
const staleTTL = 30

// entry is one cached upstream reply, packed: a slice of bytes the
// collector does not scan, where a *dns.Msg is a dozen objects full of
// pointers to mark in every cycle, a hundred thousand times over with a
// full cache. Readers unpack a private copy through at and stale.
type entry struct {
	wire    []byte
	stored  time.Time
	expires time.Time

	hits       atomic.Int64 // times served from the cache
	refreshing atomic.Bool  // a background refresh of this entry has been started
}

// stale returns a copy of the reply to serve past its expiry: every TTL
// set to staleTTL.
func (e *entry) stale() *dns.Msg {
	m := e.reply()
	for _, section := range [][]dns.RR{m.Answer, m.Ns, m.Extra} {
		for _, rr := range section {
			rr.Header().Ttl = staleTTL
		}
	}
	return m
}

// reply unpacks the cached reply. It was packed from a parsed message by
// store, so it unpacks; should it not, the copy is a SERVFAIL.
func (e *entry) reply() *dns.Msg {
	m := new(dns.Msg)
	if err := m.Unpack(e.wire); err != nil {
		return &dns.Msg{MsgHdr: dns.MsgHdr{Response: true, Rcode: dns.RcodeServerFailure}}
	}
	return m
}

// startPrefetch counts a hit at now and reports whether it should start
// the one refresh of this entry: the entry has had at least minHits hits
// (0: never) and is in the last percent of its lifetime.
func (e *entry) startPrefetch(now time.Time, minHits int64, percent int) bool {
	hits := e.hits.Add(1)
	if minHits == 0 || hits < minHits {
		return false
	}
	lifetime := e.expires.Sub(e.stored)
	if e.expires.Sub(now)*100 > lifetime*time.Duration(percent) {
		return false
	}
	return e.startRefresh()
}

// startRefresh claims the one background refresh of this entry.
func (e *entry) startRefresh() bool {
	return e.refreshing.CompareAndSwap(false, true)
}

// at returns a copy of the reply as it stands at now: every TTL lowered by
// the whole seconds the entry has aged.
func (e *entry) at(now time.Time) *dns.Msg {
	m := e.reply()
	age := now.Sub(e.stored) / time.Second
	for _, section := range [][]dns.RR{m.Answer, m.Ns, m.Extra} {
		for _, rr := range section {
			h := rr.Header()
			h.Ttl = uint32(max(int64(h.Ttl)-int64(age), 0))
		}
	}
	return m
}

// cache is an LRU of replies keyed by question and route. A nil lru means
// caching is off.
type cache struct {
	lru      *lru.Cache[string, *entry]
	maxTTL   time.Duration // caps every TTL stored, and so served
	maxNeg   time.Duration
	staleFor time.Duration // how long past expiry an entry may be served stale
	metrics  *metrics
}

func newCache(size int, maxTTL, maxNeg, staleFor time.Duration, m *metrics) (*cache, error) {
	if maxTTL <= 0 {
		maxTTL = defaultMaxTTL
	}
	c := &cache{maxTTL: maxTTL, maxNeg: maxNeg, staleFor: staleFor, metrics: m}
	if size == 0 {
		return c, nil
	}
	l, err := lru.New[string, *entry](size)
	if err != nil {
		return nil, err
	}
	c.lru = l
	return c, nil
}

// get returns the unexpired entry for key.
func (c *cache) get(key string, now time.Time) (*entry, bool) {
	if c.lru == nil {
		return nil, false
	}
	e, ok := c.lru.Get(key)
	if !ok || !now.Before(e.expires) {
		return nil, false
	}
	return e, true
}

// getStale returns the expired entry for key that may still be served
// stale at now.
func (c *cache) getStale(key string, now time.Time) (*entry, bool) {
	if c.lru == nil || c.staleFor == 0 {
		return nil, false
	}
	e, ok := c.lru.Peek(key)
	if !ok || now.Before(e.expires) || !now.Before(e.expires.Add(c.staleFor)) {
		return nil, false
	}
	return e, true
}

// store makes an entry of reply r received at now, and caches it when r
// may be cached. The entry is returned either way.
func (c *cache) store(key string, r *dns.Msg, now time.Time) *entry {
	msg := cacheable(r)
	capTTLs(msg, c.maxTTL)
	ttl := c.ttl(msg)
	wire, err := msg.Pack()
	if err != nil {
		wire, ttl = packedServfail, 0
	}
	e := &entry{wire: wire, stored: now, expires: now.Add(ttl)}
	if ttl > 0 && c.lru != nil && c.lru.Add(key, e) {
		c.metrics.evictions.Inc()
	}
	return e
}

// packedServfail is the entry of a reply that does not pack: it is not
// cached, and its one client gets SERVFAIL.
var packedServfail, _ = (&dns.Msg{MsgHdr: dns.MsgHdr{Response: true, Rcode: dns.RcodeServerFailure}}).Pack()

func (c *cache) len() int {
	if c.lru == nil {
		return 0
	}
	return c.lru.Len()
}

// cacheable returns a copy of r without what belongs to one exchange: the
// ID, the question and the OPT record.
func cacheable(r *dns.Msg) *dns.Msg {
	m := r.Copy()
	m.Id = 0
	m.Question = nil
	m.Extra = withoutOPT(m.Extra)
	return m
}

// capTTLs lowers every TTL in m above maxTTL to it.
func capTTLs(m *dns.Msg, maxTTL time.Duration) {
	top := uint32(maxTTL / time.Second)
	for _, section := range [][]dns.RR{m.Answer, m.Ns, m.Extra} {
		for _, rr := range section {
			rr.Header().Ttl = min(rr.Header().Ttl, top)
		}
	}
}

func withoutOPT(rrs []dns.RR) []dns.RR {
	out := rrs[:0]
	for _, rr := range rrs {
		if rr.Header().Rrtype != dns.TypeOPT {
			out = append(out, rr)
		}
	}
	return out
}

// ttl says how long m may be cached; 0 means not at all. A negative answer
// also has its SOA's TTL lowered to that time, so clients do not keep it
// longer than the cache does.
func (c *cache) ttl(m *dns.Msg) time.Duration {
	switch {
	case m.Rcode == dns.RcodeNameError, m.Rcode == dns.RcodeSuccess && len(m.Answer) == 0:
		return c.negativeTTL(m)
	case m.Rcode == dns.RcodeSuccess:
		return c.positiveTTL(m)
	}
	return 0
}

// positiveTTL is the smallest TTL in the reply, capped by maxTTL.
func (c *cache) positiveTTL(m *dns.Msg) time.Duration {
	least := c.maxTTL
	for _, section := range [][]dns.RR{m.Answer, m.Ns, m.Extra} {
		for _, rr := range section {
			least = min(least, time.Duration(rr.Header().Ttl)*time.Second)
		}
	}
	return least
}

// negativeTTL follows RFC 2308: the smaller of the SOA's TTL and its
// MINIMUM field, here also capped by maxNeg. Without a SOA, no caching.
func (c *cache) negativeTTL(m *dns.Msg) time.Duration {
	for _, rr := range m.Ns {
		soa, ok := rr.(*dns.SOA)
		if !ok {
			continue
		}
		secs := min(soa.Hdr.Ttl, soa.Minttl, uint32(c.maxNeg/time.Second))
		soa.Hdr.Ttl = secs
		return time.Duration(secs) * time.Second
	}
	return 0
}
