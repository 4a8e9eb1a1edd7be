package forward

import (
	"time"

	"github.com/miekg/dns"
)

// Cached is a reply the cache holds, lent to a server that serves it
// again by itself (the fast path) while the forwarder's rules allow.
type Cached struct {
	// Reply answers the query it was asked for (ID, RD and question as
	// the query's, RA set, an OPT record if the query had one), its TTLs
	// as they were at Stored.
	Reply  *dns.Msg
	Stored time.Time
	// Until is when the reply stops being served outside the forwarder:
	// its expiry, or with --cache-prefetch the start of the last
	// --cache-prefetch-percent of its TTL, so that the hits there reach
	// the forwarder and start the prefetch.
	Until time.Time
	// Hit counts one answer served from the reply, as a hit of the cache
	// (skydns_forward_cache_hits_total and --cache-prefetch's count).
	Hit func()
	// Generation is Generation when the reply was read: a reply is not
	// to be served once Generation is another.
	Generation uint64
}

// Generation changes whenever the upstreams, the cache or the stub
// domains do, so that what a Cached said may no longer hold.
func (f *Forwarder) Generation() uint64 { return f.generation.Load() }

// bumpGeneration follows every change of settings or stubs, after it is
// in place: a Cached of the new generation was read from the new ones.
func (f *Forwarder) bumpGeneration() { f.generation.Add(1) }

// CachedReply returns the cache's unexpired reply to req, a query for a
// name outside the zones from a client that may recurse, with RD set and
// CD clear, without counting a hit or a miss, or false when the cache has
// none or req is not such a query (it must take ServeForward).
func (f *Forwarder) CachedReply(req *dns.Msg) (Cached, bool) {
	if len(req.Question) != 1 || req.Opcode != dns.OpcodeQuery || req.CheckingDisabled {
		return Cached{}, false
	}
	if rcode, _ := admitQuestion(req); rcode != dns.RcodeSuccess {
		return Cached{}, false
	}
	generation := f.Generation() // before the settings: see bumpGeneration
	s := f.settings.Load()
	q := questionOf(req)
	now := f.now()
	e, ok := s.cache.get(q.key(f.routeFor(s, q.name)), now)
	if !ok {
		return Cached{}, false
	}
	until := e.expires
	if f.prefetchHits > 0 {
		until = e.expires.Add(-e.expires.Sub(e.stored) * time.Duration(f.prefetchPct) / 100)
	}
	if !now.Before(until) {
		return Cached{}, false
	}
	m := e.reply()
	hit := func() {
		e.hits.Add(1)
		f.metrics.hits.Inc()
	}
	return Cached{Reply: reply(req, m, m.Rcode), Stored: e.stored, Until: until, Hit: hit, Generation: generation}, true
}
