package forward

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/internal/polltest"
)

// switchable answers like h while up is set and drops every query (a
// timeout for the forwarder) while it is not. It counts the client
// queries it receives, leaving out health checks (the root's NS).
type switchable struct {
	up      atomic.Bool
	queries atomic.Int32
}

func (s *switchable) handler(h handler) handler {
	return func(req *dns.Msg, tcp bool) *dns.Msg {
		if req.Question[0].Name != "." {
			s.queries.Add(1)
		}
		if !s.up.Load() {
			return nil
		}
		return h(req, tcp)
	}
}

func startSwitchable(t *testing.T, h handler) (*switchable, *upstream) {
	t.Helper()
	s := &switchable{}
	s.up.Store(true)
	return s, startUpstream(t, s.handler(h))
}

func TestServeStale(t *testing.T) {
	tests := []struct {
		name       string
		serveStale time.Duration
		age        time.Duration // past the entry's expiry
		wantRcode  int
	}{
		{"an expired answer is served stale while the upstream is down", time.Hour, time.Second, dns.RcodeSuccess},
		{"an answer expired longer than --serve-stale is not served", time.Hour, time.Hour, dns.RcodeServerFailure},
		{"with --serve-stale 0 an expired answer is not served", 0, time.Second, dns.RcodeServerFailure},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sw, up := startSwitchable(t, answerA("192.0.2.60", 60))
			cfg := testConfig(up.addr)
			cfg.ServeStale = tt.serveStale
			f, clock, _ := testForwarder(t, cfg)
			wantA(t, ask(t, f, "www.example.org.", dns.TypeA), "192.0.2.60", 60)
			sw.up.Store(false)
			clock.Advance(60*time.Second + tt.age)
			m := ask(t, f, "www.example.org.", dns.TypeA)
			wantRcode(t, m, tt.wantRcode)
			if tt.wantRcode == dns.RcodeSuccess {
				wantA(t, m, "192.0.2.60", staleTTL)
			}
		})
	}

	t.Run("once the upstream is known down, stale answers go out without waiting for it", func(t *testing.T) {
		sw, up := startSwitchable(t, answerA("192.0.2.61", 60))
		cfg := testConfig(up.addr)
		cfg.ServeStale = time.Hour
		cfg.ForwardTimeout, cfg.ForwardDeadline = time.Second, 3*time.Second
		f, clock, _ := testForwarder(t, cfg)
		ask(t, f, "www.example.org.", dns.TypeA)
		sw.up.Store(false)
		clock.Advance(61 * time.Second)
		wantA(t, ask(t, f, "www.example.org.", dns.TypeA), "192.0.2.61", staleTTL) // waits the 1 s timeout
		start := time.Now()
		for range 3 {
			wantA(t, ask(t, f, "www.example.org.", dns.TypeA), "192.0.2.61", staleTTL)
		}
		if took := time.Since(start); took > time.Second {
			t.Errorf("three stale answers took %v, want them without waiting for the upstream", took)
		}
		if got := value(f.metrics.stale); got != 4 {
			t.Errorf("stale answers counted %v, want 4", got)
		}
		f.background.Wait()
		if got := sw.queries.Load(); got != 3 {
			t.Errorf("upstream got %d queries, want 3: the first, the failed one, one background refresh", got)
		}
	})

	t.Run("a fresh answer replaces the stale one when the upstream is back", func(t *testing.T) {
		sw, up := startSwitchable(t, answerA("192.0.2.62", 60))
		cfg := testConfig(up.addr)
		cfg.ServeStale = time.Hour
		f, clock, _ := testForwarder(t, cfg)
		ask(t, f, "www.example.org.", dns.TypeA)
		sw.up.Store(false)
		clock.Advance(61 * time.Second)
		wantA(t, ask(t, f, "www.example.org.", dns.TypeA), "192.0.2.62", staleTTL)
		sw.up.Store(true)
		clock.Advance(failureHold)
		wantA(t, ask(t, f, "www.example.org.", dns.TypeA), "192.0.2.62", 60)
	})
}

func TestPrefetch(t *testing.T) {
	up := startUpstream(t, answerA("192.0.2.70", 100))
	cfg := testConfig(up.addr)
	cfg.CachePrefetch = 2
	cfg.CachePrefetchPercent = 10
	f, clock, reg := testForwarder(t, cfg)
	hit := func(wantTTL uint32) {
		t.Helper()
		wantA(t, ask(t, f, "popular.example.org.", dns.TypeA), "192.0.2.70", wantTTL)
		f.background.Wait()
	}
	hit(100)

	t.Run("a hit before the last 10% of the TTL does not refresh", func(t *testing.T) {
		clock.Advance(50 * time.Second)
		hit(50)
		if up.queries() != 1 {
			t.Errorf("upstream got %d queries, want 1", up.queries())
		}
	})
	t.Run("the second hit, in the last 10% of the TTL, refreshes the entry once", func(t *testing.T) {
		clock.Advance(45 * time.Second)
		hit(5)
		for range 5 {
			ask(t, f, "popular.example.org.", dns.TypeA)
		}
		f.background.Wait()
		if up.queries() != 2 {
			t.Errorf("upstream got %d queries, want 2: one refresh", up.queries())
		}
		if got := gathered(t, reg, "skydns_forward_prefetches_total"); got != 1 {
			t.Errorf("prefetches %v, want 1", got)
		}
		hit(100)
	})
	t.Run("an entry asked for once is left to expire", func(t *testing.T) {
		ask(t, f, "rare.example.org.", dns.TypeA)
		clock.Advance(95 * time.Second)
		before := up.queries()
		wantA(t, ask(t, f, "rare.example.org.", dns.TypeA), "192.0.2.70", 5)
		f.background.Wait()
		if up.queries() != before {
			t.Errorf("upstream got %d more queries, want none", up.queries()-before)
		}
	})
}

func TestMaxConcurrent(t *testing.T) {
	gate := make(chan struct{})
	slowQueries := atomic.Int32{}
	slow := startUpstream(t, func(req *dns.Msg, tcp bool) *dns.Msg {
		slowQueries.Add(1)
		<-gate
		return answerA("192.0.2.80", 60)(req, tcp)
	})
	t.Cleanup(func() { close(gate) }) // runs before the upstream's shutdown
	fast := startUpstream(t, answerA("192.0.2.81", 60))

	t.Run("beyond the limit a query gets SERVFAIL when there is no other upstream", func(t *testing.T) {
		cfg := testConfig(slow.addr)
		cfg.MaxConcurrent = 1
		cfg.ForwardTimeout, cfg.ForwardDeadline = 10*time.Second, 10*time.Second
		f, _, _ := testForwarder(t, cfg)
		var wg sync.WaitGroup
		t.Cleanup(wg.Wait)
		wg.Go(func() { f.ServeForward(t.Context(), query("first.example.org.", dns.TypeA), localClient) })
		polltest.True(t, "the first query at the slow upstream", func() bool { return slowQueries.Load() == 1 })
		start := time.Now()
		wantRcode(t, ask(t, f, "second.example.org.", dns.TypeA), dns.RcodeServerFailure)
		if took := time.Since(start); took > time.Second {
			t.Errorf("the refused query took %v, want an answer at once", took)
		}
		if got := value(f.metrics.upstream.WithLabelValues(slow.addr, resultOverLimit)); got != 1 {
			t.Errorf("over_limit counted %v, want 1", got)
		}
		if slowQueries.Load() != 1 {
			t.Errorf("slow upstream got %d queries, want 1", slowQueries.Load())
		}
	})

	t.Run("beyond the limit a query goes to the next upstream", func(t *testing.T) {
		slowQueries.Store(0)
		cfg := testConfig(slow.addr, fast.addr)
		cfg.MaxConcurrent = 1
		cfg.ForwardTimeout, cfg.ForwardDeadline = 10*time.Second, 10*time.Second
		f, _, _ := testForwarder(t, cfg)
		var wg sync.WaitGroup
		t.Cleanup(wg.Wait)
		// Turns alternate, so of two queries one starts at the slow upstream.
		for i := 0; slowQueries.Load() == 0 && i < 4; i++ {
			name := "fill" + string(rune('a'+i)) + ".example.org."
			wg.Go(func() { f.ServeForward(t.Context(), query(name, dns.TypeA), localClient) })
			polltest.True(t, "the query answered or at the slow upstream", func() bool {
				return slowQueries.Load() > 0 || fast.queries() > i
			})
		}
		for _, name := range []string{"x.example.org.", "y.example.org."} {
			wantA(t, ask(t, f, name, dns.TypeA), "192.0.2.81", 60)
		}
		if got := value(f.metrics.upstream.WithLabelValues(slow.addr, resultOverLimit)); got != 1 {
			t.Errorf("over_limit counted %v, want 1 (one of two turns starts at the slow upstream)", got)
		}
	})
}

func TestHealthCheck(t *testing.T) {
	sw, down := startSwitchable(t, answerA("192.0.2.90", 60))
	healthy := startUpstream(t, answerA("192.0.2.91", 60))
	cfg := testConfig(down.addr, healthy.addr)
	cfg.HealthCheck = 20 * time.Millisecond
	f, _, _ := testForwarder(t, cfg)
	sw.up.Store(false)
	for i := 0; value(f.metrics.upstream.WithLabelValues(down.addr, resultTimeout)) == 0 && i < 4; i++ {
		wantA(t, ask(t, f, "first"+strings.Repeat("x", i)+".example.org.", dns.TypeA), "192.0.2.91", 60)
	}

	t.Run("a failed upstream is probed and skipped while it stays down", func(t *testing.T) {
		polltest.True(t, "two failed probes", func() bool {
			return value(f.metrics.probes.WithLabelValues(down.addr, resultTimeout)) >= 2
		})
		before := sw.queries.Load()
		start := time.Now()
		for i := range 6 {
			wantA(t, ask(t, f, "down"+strings.Repeat("x", i)+".example.org.", dns.TypeA), "192.0.2.91", 60)
		}
		if took := time.Since(start); took > cfg.ForwardTimeout {
			t.Errorf("six queries took %v, want none of them waiting for the dead upstream", took)
		}
		if got := sw.queries.Load(); got != before {
			t.Errorf("the dead upstream got %d client queries, want 0", got-before)
		}
	})

	t.Run("an upstream that answers the probe takes queries again", func(t *testing.T) {
		sw.up.Store(true)
		polltest.True(t, "the upstream healthy again", func() bool { return !f.health.held(down.addr) })
		before := sw.queries.Load()
		for i := range 2 {
			ask(t, f, "back"+strings.Repeat("x", i)+".example.org.", dns.TypeA)
		}
		if sw.queries.Load() != before+1 {
			t.Errorf("the recovered upstream got %d of 2 queries, want its turn", sw.queries.Load()-before)
		}
	})
}

func TestAnUpstreamOutage(t *testing.T) {
	t.Run("after one lost reply, before a health check fails, a new name is still asked upstream", func(t *testing.T) {
		sw, up := startSwitchable(t, answerA("192.0.2.65", 60))
		cfg := testConfig(up.addr)
		f, _, _ := testForwarder(t, cfg)
		sw.up.Store(false)
		wantRcode(t, ask(t, f, "lost.example.org.", dns.TypeA), dns.RcodeServerFailure)
		sw.up.Store(true)
		wantA(t, ask(t, f, "next.example.org.", dns.TypeA), "192.0.2.65", 60)
	})

	t.Run("a stale answer goes out within RFC 8767's client response timer, before the upstream's timeout", func(t *testing.T) {
		sw, up := startSwitchable(t, answerA("192.0.2.63", 60))
		cfg := testConfig(up.addr)
		cfg.ServeStale = time.Hour
		cfg.ForwardTimeout, cfg.ForwardDeadline = 3*time.Second, 4*time.Second
		f, clock, _ := testForwarder(t, cfg)
		ask(t, f, "www.example.org.", dns.TypeA)
		sw.up.Store(false)
		clock.Advance(61 * time.Second)
		start := time.Now()
		wantA(t, ask(t, f, "www.example.org.", dns.TypeA), "192.0.2.63", staleTTL)
		if took := time.Since(start); took >= 2*time.Second {
			t.Errorf("the stale answer took %v, want it within %v (a client retries after 2 s)", took, clientResponseTimer)
		}
		f.background.Wait()
	})

	t.Run("a name the cache does not hold gets SERVFAIL at once while every upstream is known down", func(t *testing.T) {
		sw, up := startSwitchable(t, answerA("192.0.2.64", 60))
		cfg := testConfig(up.addr)
		cfg.ForwardTimeout, cfg.ForwardDeadline, cfg.HealthCheck = 500*time.Millisecond, time.Second, 50*time.Millisecond
		f, _, _ := testForwarder(t, cfg)
		sw.up.Store(false)
		wantRcode(t, ask(t, f, "first.example.org.", dns.TypeA), dns.RcodeServerFailure) // waits the timeout
		polltest.True(t, "a failed health check", func() bool {
			return value(f.metrics.probes.WithLabelValues(up.addr, resultTimeout)) >= 1
		})
		before := sw.queries.Load()
		start := time.Now()
		wantRcode(t, ask(t, f, "new.example.org.", dns.TypeA), dns.RcodeServerFailure)
		if took := time.Since(start); took >= cfg.ForwardTimeout {
			t.Errorf("SERVFAIL took %v, want it before the %v timeout", took, cfg.ForwardTimeout)
		}
		if got := sw.queries.Load() - before; got != 0 {
			t.Errorf("the upstream got %d queries for the new name while known down, want 0", got)
		}
	})
}
