package fastpath

import (
	"encoding/binary"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// fakeForwarder is a RecursiveSource whose names under "ext." are the
// forwarder's: A records with TTL 60 stored age ago, served until
// expires, to clients in allowed. Names under "test." are fakeAnswers'.
type fakeForwarder struct {
	fakeAnswers
	allowed    netip.Prefix
	age        time.Duration
	expires    time.Time
	cached     bool // the forwarder's cache holds the names
	generation uint64
	fills      int // Recursive answers asked for
	hits       int // replies counted
}

func newFakeForwarder(age time.Duration) *fakeForwarder {
	return &fakeForwarder{fakeAnswers: fakeAnswers{ttl: 30}, allowed: netip.MustParsePrefix("127.0.0.0/8"), age: age,
		expires: time.Now().Add(time.Hour), cached: true}
}

func (f *fakeForwarder) RecursionAllowed(client netip.Addr) bool { return f.allowed.Contains(client) }

func (f *fakeForwarder) Generation() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.generation
}

func (f *fakeForwarder) Fill(name string, qtype uint16) (Answer, bool) {
	if !dns.IsSubDomain("ext.", name) {
		return f.fakeAnswers.Fill(name, qtype)
	}
	return f.fill(name, qtype, false)
}

// FillDNSSEC answers names under "ext." only.
func (f *fakeForwarder) FillDNSSEC(name string, qtype uint16) (Answer, bool) {
	return f.fill(name, qtype, true)
}

func (f *fakeForwarder) fill(name string, qtype uint16, do bool) (Answer, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fills++
	a := Answer{Version: f.version, Recursive: true, Stored: time.Now().Add(-f.age), Expires: f.expires,
		Generation: f.generation, Hit: func() { f.hits++ }}
	if !f.cached {
		return a, false
	}
	a.Wire = forwardedReply(name, qtype, 60, do).pack()
	return a, true
}

// wire is a message to pack.
type wire struct{ *dns.Msg }

func (w wire) pack() []byte {
	b, err := w.Pack()
	if err != nil {
		panic(err)
	}
	return b
}

// forwardedReply is a forwarder's answer to name: an A record and, in
// the additional section, an AAAA record, both with ttl, and an OPT
// record, with the DO bit if do (its TTL field holds it: it must not age).
func forwardedReply(name string, qtype uint16, ttl uint32, do bool) wire {
	req := new(dns.Msg).SetQuestion(name, qtype)
	req.RecursionDesired = true
	m := new(dns.Msg).SetReply(req)
	m.RecursionAvailable = true
	hdr := dns.RR_Header{Name: name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: ttl}
	m.Answer = []dns.RR{&dns.A{Hdr: hdr, A: net.IPv4(192, 0, 2, 1)}}
	hdr.Rrtype = dns.TypeAAAA
	m.Extra = []dns.RR{&dns.AAAA{Hdr: hdr, AAAA: net.ParseIP("2001:db8::1")}}
	m.SetEdns0(fakeMaxUDPSize, do)
	m.Compress = true
	return wire{m}
}

var (
	allowedClient = &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5300}
	otherClient   = &net.UDPAddr{IP: net.IPv4(192, 0, 2, 9), Port: 5300}
)

// ask runs a query for name from client through c, with RD set.
func ask(t testing.TB, c *Cache, name string, client net.Addr, edit func(*dns.Msg)) (*dns.Msg, bool) {
	t.Helper()
	q := aQuery(name, 1232)
	q.Id, q.RecursionDesired = 0x1234, true
	if edit != nil {
		edit(q)
	}
	c.Refresh()
	resp, _, ok := c.Reply(make([]byte, 0, fakeMaxUDPSize), wire{q}.pack(), client)
	if !ok {
		return nil, false
	}
	return unpack(t, resp), true
}

func TestForwardedAnswersOnlyForClientsThatMayRecurseWithRD(t *testing.T) {
	src := newFakeForwarder(0)
	c, _ := newTestCache(src, 100)
	for _, tc := range []struct {
		name   string
		client net.Addr
		edit   func(*dns.Msg)
	}{
		{"a client outside the ACL", otherClient, nil},
		{"an unknown client", nil, nil},
		{"RD clear", allowedClient, func(q *dns.Msg) { q.RecursionDesired = false }},
		{"CD set", allowedClient, func(q *dns.Msg) { q.CheckingDisabled = true }},
		{"AD set", allowedClient, func(q *dns.Msg) { q.AuthenticatedData = true }},
	} {
		if _, ok := ask(t, c, "www.ext.", tc.client, tc.edit); ok {
			t.Errorf("%s: answered from the fast path, want the ordinary path", tc.name)
		}
	}
	got, ok := ask(t, c, "WwW.eXt.", allowedClient, nil)
	if !ok {
		t.Fatal("a client that may recurse, with RD set: not answered")
	}
	if got.Id != 0x1234 || !got.RecursionDesired || got.Question[0].Name != "WwW.eXt." || len(got.Answer) != 1 {
		t.Errorf("answer not patched for the query (ID, RD, the question's case):\n%v", got)
	}
	if src.fills != 1 || src.hits != 1 {
		t.Errorf("%d fills and %d hits, want one fill kept for every client, one hit for the one reply", src.fills, src.hits)
	}
	if _, ok := ask(t, c, "test.", otherClient, nil); !ok {
		t.Error("a zone's answer is not served to a client that may not recurse")
	}
}

func TestForwardedAnswersAgeTheirTTLs(t *testing.T) {
	src := newFakeForwarder(10500 * time.Millisecond)
	c, _ := newTestCache(src, 100)
	for _, do := range []bool{false, true} {
		got, ok := ask(t, c, "www.ext.", allowedClient, func(q *dns.Msg) { q.Extra = nil; q.SetEdns0(1232, do) })
		if !ok {
			t.Fatal("not answered")
		}
		if a, aaaa := got.Answer[0].Header().Ttl, got.Extra[0].Header().Ttl; a != 50 || aaaa != 50 {
			t.Errorf("DO %v: TTLs %d and %d stored 10.5 s ago with 60, want 50 (whole seconds)", do, a, aaaa)
		}
		if opt := got.IsEdns0(); opt == nil || opt.Do() != do || opt.ExtendedRcode() != 0 {
			t.Errorf("DO %v: OPT record changed: %v", do, opt)
		}
	}
	got, ok := ask(t, c, "www.ext.", allowedClient, func(q *dns.Msg) { q.Extra = nil })
	if !ok || got.Answer[0].Header().Ttl != 50 || got.IsEdns0() != nil {
		t.Errorf("without EDNS: want TTL 50 and no OPT record, got (answered %v)\n%v", ok, got)
	}
	src.age = 2 * time.Minute
	if got, ok := ask(t, c, "old.ext.", allowedClient, nil); !ok || got.Answer[0].Header().Ttl != 0 {
		t.Errorf("TTL past its age: want 0, got (answered %v)\n%v", ok, got)
	}
}

func TestForwardedAnswersStopAtTheirEndOrANewGeneration(t *testing.T) {
	src := newFakeForwarder(0)
	c, _ := newTestCache(src, 100)
	ask(t, c, "www.ext.", allowedClient, nil)
	ask(t, c, "www.ext.", allowedClient, nil)
	if src.fills != 1 {
		t.Fatalf("%d fills for two queries, want 1", src.fills)
	}
	src.mu.Lock()
	src.generation++
	src.mu.Unlock()
	ask(t, c, "www.ext.", allowedClient, nil)
	if src.fills != 2 {
		t.Errorf("%d fills after a new generation, want 2: the answer must be asked for again", src.fills)
	}
	src.expires = time.Now().Add(-time.Second)
	ask(t, c, "late.ext.", allowedClient, nil)
	ask(t, c, "late.ext.", allowedClient, nil)
	if src.fills != 4 {
		t.Errorf("%d fills, want 4: an answer past its end is asked for again", src.fills)
	}
	src.cached, src.expires = false, time.Now().Add(time.Hour)
	for range 3 {
		if _, ok := ask(t, c, "new.ext.", allowedClient, nil); ok {
			t.Fatal("a name the forwarder's cache lacks was answered")
		}
	}
	if src.fills != 7 {
		t.Errorf("%d fills, want 7: a name the forwarder's cache lacks leaves no marker", src.fills)
	}
}

func TestAnsweringACachedForwardedQueryAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	c, _ := newTestCache(newFakeForwarder(5*time.Second), 100)
	answerAllocatesNothing(t, c, "WwW.ext.", "a cached forwarded reply")
}

// answerAllocatesNothing asks c for name with RD set from allowedClient,
// then checks that answering again allocates nothing.
func answerAllocatesNothing(t *testing.T, c *Cache, name, what string) {
	t.Helper()
	q := aQuery(name, 1232)
	q.RecursionDesired = true
	pkt, out := wire{q}.pack(), make([]byte, 0, fakeMaxUDPSize)
	c.Refresh()
	if _, _, ok := c.Reply(out, pkt, allowedClient); !ok {
		t.Fatalf("%s: not answered", what)
	}
	if allocs := testing.AllocsPerRun(100, func() { c.Reply(out, pkt, allowedClient) }); allocs != 0 {
		t.Errorf("%s allocates %.1f times, want 0", what, allocs)
	}
}

func TestTTLOffsetsReadEveryRecordButOPT(t *testing.T) {
	b := forwardedReply("www.ext.", dns.TypeA, 77, true).pack()
	ttls, ok := ttlOffsets(b)
	if !ok || len(ttls) != 2 {
		t.Fatalf("ttlOffsets = %v, %v; want the A's and the AAAA's", ttls, ok)
	}
	for _, at := range ttls {
		if got := binary.BigEndian.Uint32(b[at:]); got != 77 {
			t.Errorf("offset %d holds %d, not the TTL 77", at, got)
		}
	}
	if _, ok := ttlOffsets(b[:len(b)-3]); ok {
		t.Error("a cut message read")
	}
}
