package fastpath

import (
	"bytes"
	"testing"

	"github.com/miekg/dns"
)

func newTestCache(src Source, maxEntries int) (*Cache, *Stats) {
	stats := NewStats()
	return NewCache(CacheConfig{Source: src, MaxUDPSize: fakeMaxUDPSize, MaxEntries: maxEntries, Stats: stats.NewShard(true)}), stats
}

// reply runs one query through c.
func reply(c *Cache, m *dns.Msg) ([]byte, bool) {
	pkt, err := m.Pack()
	if err != nil {
		panic(err)
	}
	resp, _, ok := c.Reply(make([]byte, 0, fakeMaxUDPSize), pkt, nil)
	return resp, ok
}

func aQuery(name string, edns uint16) *dns.Msg {
	m := new(dns.Msg).SetQuestion(name, dns.TypeA)
	if edns > 0 {
		m.SetEdns0(edns, false)
	}
	return m
}

func TestReplyIsTheSourcesAnswerPatchedForTheQuery(t *testing.T) {
	src := &fakeAnswers{ttl: 30}
	c, _ := newTestCache(src, 100)
	for _, edns := range []uint16{0, 1232} {
		for _, bits := range []struct{ rd, cd bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
			q := aQuery("N.3.TeSt.", edns)
			q.Id, q.RecursionDesired, q.CheckingDisabled = 0xabcd, bits.rd, bits.cd
			t.Run(q.Question[0].Name+" "+flagString(q), func(t *testing.T) {
				got, ok := reply(c, q)
				if !ok {
					t.Fatal("not answered")
				}
				want := fakeResponse(q, 30)
				if edns > 0 {
					want.SetEdns0(fakeMaxUDPSize, false)
				}
				want.Compress = true
				wantBytes, _ := want.Pack()
				if !bytes.Equal(got, wantBytes) {
					t.Fatalf("got\n%v\nwant\n%v", unpack(t, got), want)
				}
			})
		}
	}
	if src.computed != 1 {
		t.Errorf("the source computed %d answers, want 1 for one name and type", src.computed)
	}
}

func flagString(m *dns.Msg) string {
	s := "id, "
	if m.RecursionDesired {
		s += "RD "
	}
	if m.CheckingDisabled {
		s += "CD "
	}
	if m.IsEdns0() != nil {
		s += "EDNS"
	}
	return s
}

func TestReplyLeavesWhatDoesNotFitToTheOrdinaryPath(t *testing.T) {
	// 40 A records make 666 bytes (677 with OPT); 300 make more than 4096.
	c, _ := newTestCache(&fakeAnswers{ttl: 30}, 100)
	tests := []struct {
		name     string
		q        *dns.Msg
		answered bool
	}{
		{"an answer over 512 bytes without EDNS is not answered", aQuery("n.40.test.", 0), false},
		{"it is answered to an EDNS size of 1232", aQuery("n.40.test.", 1232), true},
		{"it is not answered to an EDNS size of 600", aQuery("n.40.test.", 600), false},
		{"an EDNS size under 512 counts as 512", aQuery("n.40.test.", 100), false},
		{"a small answer fits an EDNS size under 512", aQuery("n.1.test.", 100), true},
		{"an answer the source truncated is never answered", aQuery("n.300.test.", 65000), false},
		{"a name the source declines is not answered", aQuery("elsewhere.example.", 0), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := reply(c, tc.q)
			if ok != tc.answered {
				t.Fatalf("answered: %v, want %v", ok, tc.answered)
			}
			if ok && len(got) > max(int(tc.q.IsEdns0().UDPSize()), 512) {
				t.Fatalf("answered %d bytes", len(got))
			}
		})
	}
}

func TestDeclinedNamesAreRemembered(t *testing.T) {
	src := &fakeAnswers{}
	c, _ := newTestCache(src, 100)
	for range 3 {
		if _, ok := reply(c, aQuery("elsewhere.example.", 0)); ok {
			t.Fatal("answered a name the source declines")
		}
	}
	if src.computed != 1 {
		t.Fatalf("the source was asked %d times, want once", src.computed)
	}
}

func TestANewVersionDropsTheCachedAnswers(t *testing.T) {
	src := &fakeAnswers{ttl: 30}
	c, _ := newTestCache(src, 100)
	ttl := func() uint32 {
		t.Helper()
		got, ok := reply(c, aQuery("n.1.test.", 0))
		if !ok {
			t.Fatal("not answered")
		}
		return unpack(t, got).Answer[0].Header().Ttl
	}
	if got := ttl(); got != 30 {
		t.Fatalf("TTL %d, want 30", got)
	}
	src.bump(60)
	if got := ttl(); got != 30 {
		t.Fatalf("TTL %d before Refresh, want the cached 30", got)
	}
	c.Refresh()
	if got := ttl(); got != 60 {
		t.Fatalf("TTL %d after Refresh, want the new 60", got)
	}
}

func TestAnAnswerFromAnotherVersionIsServedButNotKept(t *testing.T) {
	src := &fakeAnswers{ttl: 30}
	c, _ := newTestCache(src, 100)
	src.bump(60) // the cache has not seen version 1 yet
	got, ok := reply(c, aQuery("n.1.test.", 0))
	if !ok || unpack(t, got).Answer[0].Header().Ttl != 60 {
		t.Fatalf("answered %v, want the newest answer", ok)
	}
	if c.Len() != 0 {
		t.Fatalf("kept %d answers of a version the cache is not at", c.Len())
	}
}

func TestAFullCacheIsEmptiedBeforeTheNextAnswerIsKept(t *testing.T) {
	c, _ := newTestCache(&fakeAnswers{ttl: 30}, 2)
	for i, name := range []string{"n.1.test.", "n.2.test.", "n.3.test."} {
		if _, ok := reply(c, aQuery(name, 0)); !ok {
			t.Fatalf("%s not answered", name)
		}
		if want := []int{1, 2, 1}[i]; c.Len() != want {
			t.Fatalf("after %s: %d answers kept, want %d", name, c.Len(), want)
		}
	}
}

// answersFunc is a Source at version 1 answering with f.
type answersFunc func(name string, qtype uint16) []byte

func (answersFunc) Version() uint64 { return 1 }

func (f answersFunc) Fill(name string, qtype uint16) (Answer, bool) {
	return Answer{Wire: f(name, qtype), Version: 1}, true
}

func TestAnswersThatBreakTheContractAreNotServed(t *testing.T) {
	good := func(name string, m func(*dns.Msg)) []byte {
		resp := new(dns.Msg).SetReply(aQuery(name, 0))
		resp.SetEdns0(fakeMaxUDPSize, false)
		if m != nil {
			m(resp)
		}
		b, _ := resp.Pack()
		return b
	}
	tests := []struct {
		name string
		wire func(name string) []byte
	}{
		{"an answer to another name", func(string) []byte { return good("other.test.", nil) }},
		{"an answer without an OPT record", func(name string) []byte { return good(name, func(m *dns.Msg) { m.Extra = nil }) }},
		{"an answer advertising another UDP size", func(name string) []byte {
			return good(name, func(m *dns.Msg) { m.IsEdns0().SetUDPSize(512) })
		}},
		{"a truncated answer", func(name string) []byte { return good(name, func(m *dns.Msg) { m.Truncated = true }) }},
		{"a few bytes", func(string) []byte { return []byte{1, 2, 3} }},
	}
	for _, tc := range tests {
		t.Run(tc.name+" is not served", func(t *testing.T) {
			c, _ := newTestCache(answersFunc(func(name string, _ uint16) []byte { return tc.wire(name) }), 10)
			if _, ok := reply(c, aQuery("a.test.", 0)); ok {
				t.Fatal("served")
			}
		})
	}
	t.Run("a well-formed answer is served", func(t *testing.T) {
		c, _ := newTestCache(answersFunc(func(name string, _ uint16) []byte { return good(name, nil) }), 10)
		if _, ok := reply(c, aQuery("a.test.", 0)); !ok {
			t.Fatal("not served")
		}
	})
}
