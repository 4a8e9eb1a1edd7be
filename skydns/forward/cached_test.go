package forward

import (
	"net/netip"
	"testing"
	"time"

	"github.com/miekg/dns"
)

func TestCachedReplyLendsUntilThePrefetchWindow(t *testing.T) {
	up := startUpstream(t, answerA("192.0.2.70", 100))
	cfg := testConfig(up.addr)
	cfg.CachePrefetch = 2
	cfg.CachePrefetchPercent = 10
	f, clock, reg := testForwarder(t, cfg)
	req := query("popular.example.org.", dns.TypeA)
	if _, ok := f.CachedReply(req); ok {
		t.Fatal("a reply lent before anything was cached")
	}
	ask(t, f, "popular.example.org.", dns.TypeA)
	clock.Advance(30 * time.Second)
	c, ok := f.CachedReply(req)
	if !ok {
		t.Fatal("the cached reply is not lent")
	}
	wantA(t, c.Reply, "192.0.2.70", 100) // TTLs as stored: the borrower ages them
	if !c.Reply.RecursionAvailable || c.Reply.Id != req.Id || !c.Stored.Equal(clock.Now().Add(-30*time.Second)) {
		t.Errorf("reply not addressed to the query (RA, ID) or Stored %v wrong:\n%v", c.Stored, c.Reply)
	}
	if want := c.Stored.Add(90 * time.Second); !c.Until.Equal(want) {
		t.Errorf("lent until %v, want %v: the start of the last 10%% of the TTL", c.Until, want)
	}
	if hits := gathered(t, reg, "skydns_forward_cache_hits_total"); hits != 0 {
		t.Errorf("lending counted %v hits, want none until a reply is served", hits)
	}
	c.Hit()
	if hits := gathered(t, reg, "skydns_forward_cache_hits_total"); hits != 1 {
		t.Errorf("Hit counted %v hits, want 1", hits)
	}
	for _, edit := range []func(*dns.Msg){
		func(m *dns.Msg) { m.RecursionDesired = false },
		func(m *dns.Msg) { m.CheckingDisabled = true },
		func(m *dns.Msg) { m.Question[0].Qtype = dns.TypeAXFR },
	} {
		q := query("popular.example.org.", dns.TypeA)
		edit(q)
		if _, ok := f.CachedReply(q); ok {
			t.Errorf("lent for a query the cache must not answer as is:\n%v", q)
		}
	}
	t.Run("a hit lent counts toward the prefetch", func(t *testing.T) {
		clock.Advance(65 * time.Second)
		if _, ok := f.CachedReply(req); ok {
			t.Fatal("lent in the prefetch window")
		}
		wantA(t, ask(t, f, "popular.example.org.", dns.TypeA), "192.0.2.70", 5) // the second hit, with c.Hit
		f.background.Wait()
		if up.queries() != 2 {
			t.Errorf("upstream got %d queries, want 2: the lent hit and this one earn a prefetch", up.queries())
		}
	})
}

func TestGenerationChangesWithSettingsAndStubs(t *testing.T) {
	up := startUpstream(t, answerA("192.0.2.70", 100))
	f, _, _ := testForwarder(t, testConfig(up.addr))
	before := f.Generation()
	cfg := testConfig(up.addr)
	cfg.AllowRecursion = []string{"10.0.0.0/8"}
	if err := f.SetBase(cfg); err != nil {
		t.Fatal(err)
	}
	if f.Generation() == before {
		t.Error("the generation stayed through a new ACL")
	}
	before = f.Generation()
	cfg.StubDomains = []string{"example.corp=" + up.addr}
	if err := f.SetBase(cfg); err != nil {
		t.Fatal(err)
	}
	if f.Generation() == before {
		t.Error("the generation stayed through a new stub domain")
	}
	if f.RecursionAllowed(netip.MustParseAddr("127.0.0.1")) {
		t.Error("the new ACL is not in force")
	}
}
