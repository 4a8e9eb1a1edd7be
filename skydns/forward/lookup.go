package forward

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// question is what a forwarded answer depends on.
type question struct {
	name   string // lower-case FQDN
	qtype  uint16
	qclass uint16
	do, cd bool // DNSSEC OK and checking disabled
}

func questionOf(req *dns.Msg) question {
	q := req.Question[0]
	opt := req.IsEdns0()
	return question{
		name:   strings.ToLower(dns.Fqdn(q.Name)),
		qtype:  q.Qtype,
		qclass: q.Qclass,
		do:     opt != nil && opt.Do(),
		cd:     req.CheckingDisabled,
	}
}

// key is the cache and coalescing key of q sent along r.
func (q question) key(r *route) string {
	var b strings.Builder
	b.WriteString(q.name)
	b.WriteByte(' ')
	b.WriteString(strconv.Itoa(int(q.qtype)))
	b.WriteByte(' ')
	b.WriteString(strconv.Itoa(int(q.qclass)))
	if q.do {
		b.WriteString(" do")
	}
	if q.cd {
		b.WriteString(" cd")
	}
	b.WriteString(" @")
	b.WriteString(r.id)
	return b.String()
}

// msg is the query sent upstream for q.
func (q question) msg() *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion(q.name, q.qtype)
	m.Question[0].Qclass = q.qclass
	m.CheckingDisabled = q.cd
	m.SetEdns0(udpSize, q.do)
	return m
}

// routeFor returns the stub domain route for name, or the default upstreams
// of s.
func (f *Forwarder) routeFor(s *settings, name string) *route {
	if r := (*f.stubs.Load()).lookup(name); r != nil {
		return r
	}
	return s.upstream
}

// resolve returns the reply to q, from the cache or from upstream, as a
// private copy whose TTLs have been aged. Concurrent misses for the same
// key share one upstream exchange. When no upstream answers, an expired
// entry still within --serve-stale is served stale; when every server of
// the route is already known to be down, it is served at once and the
// refresh goes on in the background.
func (f *Forwarder) resolve(ctx context.Context, q question) (*dns.Msg, error) {
	s := f.settings.Load()
	r := f.routeFor(s, q.name)
	if r == s.upstream && s.excepted(q.name) {
		return nil, errExcepted
	}
	key := q.key(r)
	now := f.now()
	if e, ok := s.cache.get(key, now); ok {
		f.metrics.hits.Inc()
		if e.startPrefetch(now, f.prefetchHits, f.prefetchPct) {
			f.inBackground(q, r, s.cache, key, true)
		}
		return e.at(now), nil
	}
	f.metrics.misses.Inc()
	stale, hasStale := s.cache.getStale(key, now)
	if hasStale && f.health.allHeld(r.addrs) {
		if stale.startRefresh() {
			f.inBackground(q, r, s.cache, key, false)
		}
		return f.serveStale(stale), nil
	}
	if !hasStale && f.health.allDown(r.addrs) {
		return nil, errAllDown
	}
	wait, cancel := staleTimer(ctx, hasStale)
	defer cancel()
	e, err := f.await(wait, q, r, s.cache, key)
	if err != nil && hasStale {
		return f.serveStale(stale), nil
	}
	if err != nil {
		return nil, err
	}
	return e.at(f.now()), nil
}

// clientResponseTimer is how long a client waits for a fresh answer when
// a stale one may be served: the stale answer leaves within RFC 8767's
// 1.8 s (section 5), before a resolver's 2 s retry, with 100 ms kept for
// a busy machine's scheduling; the fetch goes on and refreshes the cache.
const clientResponseTimer = 1700 * time.Millisecond

// errExcepted answers a name under an except domain (--forward-except):
// SERVFAIL, never sent upstream.
var errExcepted = errors.New("the name is under a --forward-except domain")

// errAllDown answers a name the cache does not hold while every server of
// its route is down (health.allDown): SERVFAIL at once, not after the
// timeouts.
var errAllDown = errors.New("every upstream of the route is down")

// staleTimer is ctx, ending after clientResponseTimer when a stale answer
// is there to serve.
func staleTimer(ctx context.Context, hasStale bool) (context.Context, context.CancelFunc) {
	if !hasStale {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, clientResponseTimer)
}

func (f *Forwarder) serveStale(e *entry) *dns.Msg {
	f.metrics.stale.Inc()
	return e.stale()
}

// await joins or starts the fetch of key into c and waits for it or for
// ctx.
func (f *Forwarder) await(ctx context.Context, q question, r *route, c *cache, key string) (*entry, error) {
	ch := f.flight.DoChan(key, func() (any, error) {
		return f.fetch(context.WithoutCancel(ctx), q, r, c, key, false)
	})
	select {
	case res := <-ch:
		if res.Err != nil {
			return nil, res.Err
		}
		return res.Val.(*entry), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// inBackground fetches key without a client waiting: a prefetch (refresh
// set: the fresh entry in the cache is replaced) or the refresh of a stale
// one. It joins a fetch of key under way rather than starting another.
func (f *Forwarder) inBackground(q question, r *route, c *cache, key string, refresh bool) {
	if f.ctx.Err() != nil {
		return // closed
	}
	f.background.Add(1)
	go func() {
		defer f.background.Done()
		res := <-f.flight.DoChan(key, func() (any, error) {
			return f.fetch(f.ctx, q, r, c, key, refresh)
		})
		if refresh && res.Err == nil {
			f.metrics.prefetches.Inc()
		}
	}()
}

// fetch asks r's servers for q within the query deadline and caches the
// reply in c. Unless refresh is set it looks in the cache once more
// first: a caller that missed just before another one's fetch finished
// finds the answer there.
func (f *Forwarder) fetch(ctx context.Context, q question, r *route, c *cache, key string, refresh bool) (*entry, error) {
	if e, ok := c.get(key, f.now()); ok && !refresh {
		return e, nil
	}
	ctx, cancel := context.WithTimeout(ctx, f.deadline)
	defer cancel()
	reply, err := f.ask(ctx, r, q.msg())
	if err != nil {
		return nil, err
	}
	return c.store(key, reply, f.now()), nil
}

// ask tries r's servers one at a time, healthy ones first in turn, until
// one gives a usable answer or ctx ends. Servers found in a forwarding
// loop are left out; with none left it fails at once.
func (f *Forwarder) ask(ctx context.Context, r *route, m *dns.Msg) (*dns.Msg, error) {
	addrs := f.loops.usable(r.addrs)
	if len(addrs) == 0 {
		return nil, errLooped
	}
	for _, addr := range f.health.order(addrs, r.turn.Add(1)) {
		if ctx.Err() != nil {
			break
		}
		reply, ok := f.attempt(ctx, addr, m)
		if ok {
			return reply, nil
		}
	}
	return nil, errNoAnswer
}

// attempt is one exchange with one server within the per-attempt timeout;
// it counts the result and keeps the server's health up to date.
func (f *Forwarder) attempt(ctx context.Context, addr string, m *dns.Msg) (*dns.Msg, bool) {
	if !f.limit.acquire(addr) {
		f.metrics.upstream.WithLabelValues(addr, resultOverLimit).Inc()
		return nil, false
	}
	defer f.limit.release(addr)
	actx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	reply, result, err := f.exchange(actx, addr, m)
	f.metrics.upstream.WithLabelValues(addr, result).Inc()
	switch {
	case result == resultOK:
		if f.health.ok(addr) {
			f.logger.Info("upstream answers again", "upstream", addr)
		}
		return reply, true
	case result == resultRcode:
		f.logger.Debug("upstream could not answer", "upstream", addr, "rcode", dns.RcodeToString[reply.Rcode])
	case ctx.Err() != nil:
		// The query's deadline ran out during the attempt: not the server's fault.
	case f.health.failed(addr):
		f.logger.Warn("upstream failed, trying it last until it answers a health check", "upstream", addr, "result", result, "err", err)
		f.probe(addr)
	}
	return nil, false
}
