package fastpath

import (
	"net/netip"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// fakeSearch is a SearchSource: names under "search." are NXDOMAIN for
// every client, but pods of namespace "ns" (allowedClient while pod is
// set) get the forwarder's reply for "ext." behind a CNAME of TTL 30, its
// records' TTL 60 stored age ago. The rest is fakeForwarder's.
type fakeSearch struct {
	*fakeForwarder
	pod      bool
	podFills int // PodOf calls
}

func (f *fakeSearch) Fill(name string, qtype uint16) (Answer, bool) {
	if !dns.IsSubDomain("search.", name) {
		return f.fakeForwarder.Fill(name, qtype)
	}
	return f.denial(name, qtype, false)
}

func (f *fakeSearch) FillDNSSEC(name string, qtype uint16) (Answer, bool) {
	if !dns.IsSubDomain("search.", name) {
		return f.fakeForwarder.FillDNSSEC(name, qtype)
	}
	return f.denial(name, qtype, true)
}

// denial is the NXDOMAIN every client but the pods gets.
func (f *fakeSearch) denial(name string, qtype uint16, do bool) (Answer, bool) {
	resp := new(dns.Msg).SetQuestion(name, qtype)
	resp.Response, resp.Rcode = true, dns.RcodeNameError
	resp.SetEdns0(fakeMaxUDPSize, do)
	return Answer{Wire: wire{resp}.pack(), Version: f.version, Names: []string{name}, SearchNamespace: "ns"}, true
}

func (f *fakeSearch) PodOf(client netip.Addr, ns string) bool {
	f.podFills++
	return f.pod && ns == "ns" && client == netip.MustParseAddr("127.0.0.1")
}

func (f *fakeSearch) FillSearch(name string, qtype uint16, _ netip.Addr) (Answer, bool) {
	a, ok := f.fill("ext.", qtype, false)
	if !ok {
		return a, false
	}
	m := new(dns.Msg)
	if err := m.Unpack(a.Wire); err != nil {
		panic(err)
	}
	cname := &dns.CNAME{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeCNAME, Class: dns.ClassINET, Ttl: 30}, Target: "ext."}
	m.Question[0].Name, m.Answer = name, append([]dns.RR{cname}, m.Answer...)
	a.Wire, a.CNAMEFirst, a.Names = wire{m}.pack(), true, []string{name}
	return a, true
}

func newFakeSearch(age time.Duration) (*fakeSearch, *Cache) {
	src := &fakeSearch{fakeForwarder: newFakeForwarder(age), pod: true}
	c, _ := newTestCache(src, 100)
	return src, c
}

func TestAPodGetsItsSearchAnswerOthersTheNXDOMAIN(t *testing.T) {
	src, c := newFakeSearch(10500 * time.Millisecond)
	got, ok := ask(t, c, "Www.Search.", allowedClient, nil)
	if !ok || got.Rcode != dns.RcodeSuccess || len(got.Answer) != 2 || got.Question[0].Name != "Www.Search." {
		t.Fatalf("the pod: want the CNAME and the A record for the question as asked, got (answered %v)\n%v", ok, got)
	}
	if cname, a := got.Answer[0].Header().Ttl, got.Answer[1].Header().Ttl; cname != 30 || a != 50 {
		t.Errorf("TTLs: CNAME %d, A %d; want the CNAME's 30 as it is and the A's 60 aged by 10 s", cname, a)
	}
	if got, ok := ask(t, c, "www.search.", otherClient, nil); !ok || got.Rcode != dns.RcodeNameError {
		t.Errorf("another client: want NXDOMAIN from the fast path, got (answered %v)\n%v", ok, got)
	}
	if _, ok := ask(t, c, "www.search.", nil, nil); ok {
		t.Error("an unknown client was answered: it may be a pod")
	}
	if _, ok := ask(t, c, "www.search.", allowedClient, func(q *dns.Msg) { q.RecursionDesired = false }); ok {
		t.Error("the pod without RD got the forwarded answer")
	}
	if _, ok := ask(t, c, "www.search.", allowedClient, func(q *dns.Msg) { q.Extra = nil; q.SetEdns0(1232, true) }); ok {
		t.Error("the pod's query with the DO bit was answered: it is the ordinary path's")
	}
	if src.podFills != 2 {
		t.Errorf("%d PodOf calls, want 2 (the pod, the other client): remembered within a version", src.podFills)
	}
	src.pod = true
	src.bump(30)
	ask(t, c, "www.search.", allowedClient, nil)
	if src.podFills != 3 {
		t.Errorf("%d PodOf calls after a new version, want 3: the checks are made again", src.podFills)
	}
}

func TestASearchAnswerStopsWithItsForwardedReply(t *testing.T) {
	src, c := newFakeSearch(0)
	ask(t, c, "www.search.", allowedClient, nil)
	src.mu.Lock()
	src.generation++
	src.mu.Unlock()
	src.cached = false
	if _, ok := ask(t, c, "www.search.", allowedClient, nil); ok {
		t.Error("answered after a new generation, though the forwarder no longer holds the reply")
	}
}

func TestAnsweringAPodsSearchAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	_, c := newFakeSearch(5 * time.Second)
	answerAllocatesNothing(t, c, "WwW.search.", "a pod's search answer")
}
