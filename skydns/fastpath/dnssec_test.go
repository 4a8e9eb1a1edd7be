package fastpath

import (
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// signingAnswers is fakeAnswers that also answers queries with the DO bit:
// the same answer with the DO bit in its OPT record and a TXT record
// "signed", expiring at expires. It counts those fills.
type signingAnswers struct {
	*fakeAnswers
	mu      sync.Mutex
	signed  int
	expires time.Time
}

var _ DNSSECSource = (*signingAnswers)(nil)

func (s *signingAnswers) FillDNSSEC(name string, qtype uint16) (Answer, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.signed++
	req := new(dns.Msg)
	req.Question = []dns.Question{{Name: name, Qtype: qtype, Qclass: dns.ClassINET}}
	resp := fakeResponse(req, 30)
	resp.Answer = append(resp.Answer, &dns.TXT{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 30}, Txt: []string{"signed"}})
	resp.SetEdns0(fakeMaxUDPSize, true)
	wire, err := resp.Pack()
	return Answer{Wire: wire, Version: s.Version(), Zone: "test.", Expires: s.expires}, err == nil
}

func (s *signingAnswers) fills() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.signed
}

// replyMsg runs one query through c and unpacks the answer.
func replyMsg(t *testing.T, c *Cache, m *dns.Msg) (*dns.Msg, bool) {
	t.Helper()
	wire, ok := reply(c, m)
	if !ok {
		return nil, false
	}
	resp := new(dns.Msg)
	if err := resp.Unpack(wire); err != nil {
		t.Fatalf("unpacking the answer: %v", err)
	}
	return resp, true
}

// doQuery is aQuery for name with the DO bit.
func doQuery(name string) *dns.Msg {
	q := aQuery(name, 1232)
	q.IsEdns0().SetDo()
	return q
}

func TestQueriesWithTheDOBitAreAnsweredFromTheirOwnCachedAnswer(t *testing.T) {
	src := &signingAnswers{fakeAnswers: &fakeAnswers{ttl: 30}}
	c, _ := newTestCache(src, 10)
	for range 3 {
		resp, ok := replyMsg(t, c, doQuery("n.2.test."))
		if !ok || len(resp.Answer) != 3 || resp.IsEdns0() == nil || !resp.IsEdns0().Do() {
			t.Fatalf("answered %v: %v; want the signed answer with the DO bit", ok, resp)
		}
		plain, ok := replyMsg(t, c, aQuery("n.2.test.", 1232))
		if !ok || len(plain.Answer) != 2 || plain.IsEdns0() == nil || plain.IsEdns0().Do() {
			t.Fatalf("answered %v: %v; want the plain answer without the DO bit", ok, plain)
		}
	}
	if src.fills() != 1 || src.computed != 1 {
		t.Fatalf("filled %d signed and %d plain answers, want 1 and 1", src.fills(), src.computed)
	}
}

func TestAnAnswerPastItsExpiryIsFilledAgain(t *testing.T) {
	src := &signingAnswers{fakeAnswers: &fakeAnswers{ttl: 30}, expires: time.Now().Add(-time.Second)}
	c, _ := newTestCache(src, 10)
	for range 2 {
		c.Refresh() // reads the clock
		if _, ok := reply(c, doQuery("n.1.test.")); !ok {
			t.Fatal("not answered")
		}
	}
	if src.fills() != 2 {
		t.Fatalf("filled %d times, want 2: the answer had expired", src.fills())
	}
	src.expires = time.Now().Add(time.Hour)
	c, _ = newTestCache(src, 10)
	for range 2 {
		c.Refresh()
		reply(c, doQuery("n.1.test."))
	}
	if src.fills() != 3 {
		t.Fatalf("filled %d times, want 3: an answer within its expiry is kept", src.fills())
	}
}

func TestASourceThatDoesNotSignLeavesTheDOBitToTheOrdinaryPath(t *testing.T) {
	c, _ := newTestCache(&fakeAnswers{ttl: 30}, 10)
	if _, ok := reply(c, doQuery("n.1.test.")); ok {
		t.Fatal("answered a query with the DO bit from a Source that is no DNSSECSource")
	}
}
