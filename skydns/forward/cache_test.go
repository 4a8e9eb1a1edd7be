package forward

import (
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/internal/polltest"
)

func TestPositiveCaching(t *testing.T) {
	up := startUpstream(t, answerA("192.0.2.50", 300))
	f, clock, _ := testForwarder(t, testConfig(up.addr))

	t.Run("a repeated query is answered from the cache", func(t *testing.T) {
		wantA(t, ask(t, f, "www.example.org.", dns.TypeA), "192.0.2.50", 300)
		wantA(t, ask(t, f, "WWW.example.org.", dns.TypeA), "192.0.2.50", 300)
		if up.queries() != 1 {
			t.Errorf("upstream got %d queries, want 1", up.queries())
		}
		if hits, misses := value(f.metrics.hits), value(f.metrics.misses); hits != 1 || misses != 1 {
			t.Errorf("hits %v misses %v, want 1 and 1", hits, misses)
		}
	})

	t.Run("served TTLs count down with the entry's age", func(t *testing.T) {
		clock.Advance(100*time.Second + 500*time.Millisecond)
		wantA(t, ask(t, f, "www.example.org.", dns.TypeA), "192.0.2.50", 200)
		if up.queries() != 1 {
			t.Errorf("upstream got %d queries, want still 1", up.queries())
		}
	})

	t.Run("an expired entry is asked for again", func(t *testing.T) {
		clock.Advance(200 * time.Second)
		wantA(t, ask(t, f, "www.example.org.", dns.TypeA), "192.0.2.50", 300)
		if up.queries() != 2 {
			t.Errorf("upstream got %d queries, want 2", up.queries())
		}
	})

	t.Run("another type of the same name is its own entry", func(t *testing.T) {
		wantRcode(t, ask(t, f, "www.example.org.", dns.TypeAAAA), dns.RcodeSuccess)
		if up.queries() != 3 {
			t.Errorf("upstream got %d queries, want 3", up.queries())
		}
	})
}

func TestNegativeCaching(t *testing.T) {
	tests := []struct {
		name          string
		soaTTL, min   uint32
		maxNeg        time.Duration
		wantCachedFor time.Duration // 0: not cached
	}{
		{"NXDOMAIN is cached for the SOA minimum", 3600, 5, 30 * time.Second, 5 * time.Second},
		{"NXDOMAIN is cached no longer than the SOA's own TTL", 3, 60, 30 * time.Second, 3 * time.Second},
		{"NXDOMAIN is cached no longer than --cache-max-negative-ttl", 3600, 3600, 30 * time.Second, 30 * time.Second},
		{"NXDOMAIN without a SOA is not cached", 0, 0, 30 * time.Second, 0},
		{"a zero --cache-max-negative-ttl turns negative caching off", 3600, 3600, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := startUpstream(t, negative(tt.soaTTL, tt.min))
			cfg := testConfig(up.addr)
			cfg.CacheMaxNegativeTTL = tt.maxNeg
			f, clock, _ := testForwarder(t, cfg)

			m := ask(t, f, "missing.example.org.", dns.TypeA)
			wantRcode(t, m, dns.RcodeNameError)
			if tt.wantCachedFor > 0 {
				if soa := m.Ns[0].Header().Ttl; soa != uint32(tt.wantCachedFor/time.Second) {
					t.Errorf("SOA TTL %d, want it lowered to the cache time %s", soa, tt.wantCachedFor)
				}
				clock.Advance(tt.wantCachedFor - time.Second)
				wantRcode(t, ask(t, f, "missing.example.org.", dns.TypeA), dns.RcodeNameError)
				if up.queries() != 1 {
					t.Fatalf("upstream got %d queries before the entry expired, want 1", up.queries())
				}
			}
			clock.Advance(time.Second)
			wantRcode(t, ask(t, f, "missing.example.org.", dns.TypeA), dns.RcodeNameError)
			if up.queries() != 2 {
				t.Errorf("upstream got %d queries after the entry expired, want 2", up.queries())
			}
		})
	}

	t.Run("NODATA is cached like NXDOMAIN", func(t *testing.T) {
		up := startUpstream(t, func(req *dns.Msg, tcp bool) *dns.Msg {
			m := negative(60, 60)(req, tcp)
			m.Rcode = dns.RcodeSuccess
			return m
		})
		f, _, _ := testForwarder(t, testConfig(up.addr))
		for range 2 {
			m := ask(t, f, "www.example.org.", dns.TypeMX)
			wantRcode(t, m, dns.RcodeSuccess)
		}
		if up.queries() != 1 {
			t.Errorf("upstream got %d queries, want 1", up.queries())
		}
	})
}

func TestCacheBounds(t *testing.T) {
	t.Run("the cache holds --cache-size entries and counts evictions", func(t *testing.T) {
		up := startUpstream(t, answerA("192.0.2.51", 300))
		cfg := testConfig(up.addr)
		cfg.CacheSize = 2
		f, _, reg := testForwarder(t, cfg)
		for _, name := range []string{"a.example.org.", "b.example.org.", "c.example.org."} {
			ask(t, f, name, dns.TypeA)
		}
		if got := value(f.metrics.evictions); got != 1 {
			t.Errorf("evictions %v, want 1", got)
		}
		if got := gathered(t, reg, "skydns_forward_cache_entries"); got != 2 {
			t.Errorf("cache_entries gauge %v, want 2", got)
		}
		if f.settings.Load().cache.len() != 2 {
			t.Errorf("cache holds %d entries, want 2", f.settings.Load().cache.len())
		}
		ask(t, f, "a.example.org.", dns.TypeA) // evicted: asked again
		if up.queries() != 4 {
			t.Errorf("upstream got %d queries, want 4", up.queries())
		}
	})

	t.Run("a zero --cache-size asks upstream every time", func(t *testing.T) {
		up := startUpstream(t, answerA("192.0.2.52", 300))
		cfg := testConfig(up.addr)
		cfg.CacheSize = 0
		f, _, _ := testForwarder(t, cfg)
		for range 3 {
			wantA(t, ask(t, f, "www.example.org.", dns.TypeA), "192.0.2.52", 300)
		}
		if up.queries() != 3 {
			t.Errorf("upstream got %d queries, want 3", up.queries())
		}
	})

	t.Run("an answer with TTL 0 is not cached", func(t *testing.T) {
		up := startUpstream(t, answerA("192.0.2.53", 0))
		f, _, _ := testForwarder(t, testConfig(up.addr))
		for range 2 {
			ask(t, f, "www.example.org.", dns.TypeA)
		}
		if up.queries() != 2 {
			t.Errorf("upstream got %d queries, want 2", up.queries())
		}
	})

	t.Run("SERVFAIL is not cached", func(t *testing.T) {
		up := startUpstream(t, func(req *dns.Msg, _ bool) *dns.Msg {
			return new(dns.Msg).SetRcode(req, dns.RcodeServerFailure)
		})
		f, _, _ := testForwarder(t, testConfig(up.addr))
		for range 2 {
			wantRcode(t, ask(t, f, "www.example.org.", dns.TypeA), dns.RcodeServerFailure)
		}
		if up.queries() != 2 {
			t.Errorf("upstream got %d queries, want 2", up.queries())
		}
	})
}

// gatedForwarder is a forwarder to an upstream that answers A ip only once
// release is called.
func gatedForwarder(t *testing.T, ip string) (*upstream, *Forwarder, func()) {
	gate := make(chan struct{})
	up := startUpstream(t, func(req *dns.Msg, tcp bool) *dns.Msg {
		<-gate
		return answerA(ip, 300)(req, tcp)
	})
	cfg := testConfig(up.addr)
	cfg.ForwardTimeout, cfg.ForwardDeadline = 5*time.Second, 5*time.Second
	f, _, _ := testForwarder(t, cfg)
	release := sync.OnceFunc(func() { close(gate) })
	t.Cleanup(release) // before the upstream shuts down, should the test fail early
	return up, f, release
}

func TestCoalescing(t *testing.T) {
	const clients = 20
	up, f, release := gatedForwarder(t, "192.0.2.60")
	reqs := make([]*dns.Msg, clients)
	for i := range reqs {
		reqs[i] = query("www.example.org.", dns.TypeA)
	}
	for _, m := range askTogether(t, f, release, reqs) {
		wantA(t, m, "192.0.2.60", 300)
	}
	if up.queries() != 1 {
		t.Errorf("%d identical misses made %d upstream queries, want 1", clients, up.queries())
	}
}

// askTogether sends reqs through f at once, releases the upstream when
// every one has missed the cache, and returns the replies.
func askTogether(t *testing.T, f *Forwarder, release func(), reqs []*dns.Msg) []*dns.Msg {
	t.Helper()
	replies := make(chan *dns.Msg, len(reqs))
	var wg sync.WaitGroup
	for _, req := range reqs {
		wg.Go(func() { replies <- f.ServeForward(t.Context(), req, localClient) })
	}
	polltest.True(t, "every client missed the cache", func() bool {
		return value(f.metrics.misses) == float64(len(reqs))
	})
	release()
	wg.Wait()
	close(replies)
	var out []*dns.Msg
	for m := range replies {
		out = append(out, m)
	}
	return out
}

func TestMaxTTL(t *testing.T) {
	up := startUpstream(t, answerA("192.0.2.90", 86400))
	cfg := testConfig(up.addr)
	cfg.MaxTTL = 10 * time.Minute
	f, clock, _ := testForwarder(t, cfg)

	t.Run("an upstream answer's TTL above --max-ttl is served as --max-ttl", func(t *testing.T) {
		wantA(t, ask(t, f, "long.example.org.", dns.TypeA), "192.0.2.90", 600)
	})
	t.Run("and the cache keeps it no longer", func(t *testing.T) {
		clock.Advance(599 * time.Second)
		wantA(t, ask(t, f, "long.example.org.", dns.TypeA), "192.0.2.90", 1)
		clock.Advance(time.Second)
		before := up.queries()
		wantA(t, ask(t, f, "long.example.org.", dns.TypeA), "192.0.2.90", 600)
		if up.queries() != before+1 {
			t.Errorf("upstream queries %d, want %d: the entry outlived --max-ttl", up.queries(), before+1)
		}
	})
	t.Run("by default the cap is an hour", func(t *testing.T) {
		g, _, _ := testForwarder(t, testConfig(up.addr))
		wantA(t, ask(t, g, "long.example.org.", dns.TypeA), "192.0.2.90", 3600)
	})
}

func TestCoalescingKeepsTheDOBitApart(t *testing.T) {
	up, f, release := gatedForwarder(t, "192.0.2.61")
	var reqs []*dns.Msg
	for _, do := range []bool{false, true, false, true} {
		req := query("www.example.org.", dns.TypeA)
		req.SetEdns0(1232, do)
		reqs = append(reqs, req)
	}
	for _, m := range askTogether(t, f, release, reqs) {
		wantA(t, m, "192.0.2.61", 300)
	}
	if up.queries() != 2 {
		t.Errorf("two questions with DO and two without made %d upstream queries, want 2", up.queries())
	}
}
