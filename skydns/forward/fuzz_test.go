package forward

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/miekg/dns"
)

// FuzzUpstreamResponse hands arbitrary bytes to the forwarder and its cache
// as an upstream's reply. For each input the upstream sends three
// datagrams: the bytes as they are; when they parse, the same message made
// a response to the query (its ID and question, and with the first input
// byte odd, the query's cookie); and a REFUSED that answers the query, so
// that no input waits for a timeout. The client must always get a
// well-formed reply to its question, and the cache may hold only what
// answered the question asked.
func FuzzUpstreamResponse(f *testing.F) {
	for _, seed := range fuzzSeeds() {
		f.Add(seed)
	}
	var input atomic.Pointer[[]byte]
	var sentAnswer atomic.Pointer[dns.Msg] // the made-up response sent last, nil when none
	up := startScripted(f, func(q *dns.Msg) []datagram {
		raw := *input.Load()
		out := []datagram{{payload: raw}}
		made := madeResponse(raw, q)
		sentAnswer.Store(made)
		if made != nil {
			if packed, err := made.Pack(); err == nil {
				out = append(out, datagram{payload: packed})
			}
		}
		refused := realAnswer(q, "192.0.2.1")
		refused.Rcode, refused.Answer = dns.RcodeRefused, nil
		return append(out, datagram{payload: pack(f, refused)})
	})
	cfg := testConfig(up.addr)
	cfg.CacheSize = 64 // full within a short run: evictions are checked too
	fwd, _, _ := testForwarder(f, cfg)
	var n atomic.Int64
	f.Fuzz(func(t *testing.T, packet []byte) {
		input.Store(&packet)
		req := query(fmt.Sprintf("f%d.example.org.", n.Add(1)), dns.TypeA)
		req.SetEdns0(udpSize, true)
		before := cacheAdds(fwd)
		m := serve(t, fwd, req, localClient)
		checkFuzzReply(t, req, m)
		checkFuzzCache(t, fwd, req, before, sentAnswer.Load())
	})
}

// madeResponse is raw, if it parses, made the answer to q: q's ID and
// question, the response bit and, when raw's first byte is odd, q's cookie
// with a server cookie.
func madeResponse(raw []byte, q *dns.Msg) *dns.Msg {
	m := new(dns.Msg)
	if len(raw) == 0 || m.Unpack(raw) != nil {
		return nil
	}
	m.Id, m.Question, m.Response, m.Opcode = q.Id, q.Question, true, dns.OpcodeQuery
	if raw[0]&1 == 1 {
		m.Extra = withoutOPT(m.Extra)
		m.SetEdns0(udpSize, false)
		m.IsEdns0().Option = []dns.EDNS0{&dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: cookieOf(q)[:16] + serverCookie}}
	}
	return m
}

func checkFuzzReply(t *testing.T, req, m *dns.Msg) {
	t.Helper()
	if len(m.Question) != 1 || m.Question[0] != req.Question[0] {
		t.Fatalf("reply question %v, want %v", m.Question, req.Question)
	}
	if _, err := m.Pack(); err != nil {
		t.Fatalf("the reply does not pack: %v\n%v", err, m)
	}
	switch m.Rcode {
	case dns.RcodeSuccess, dns.RcodeNameError, dns.RcodeYXDomain, dns.RcodeServerFailure:
	default:
		t.Fatalf("rcode %s, want an answer or SERVFAIL", dns.RcodeToString[m.Rcode])
	}
}

// cacheAdds counts the entries added to fwd's cache: those in it and
// those evicted (a long fuzzing run fills it).
func cacheAdds(fwd *Forwarder) int {
	return fwd.settings.Load().cache.len() + int(value(fwd.metrics.evictions))
}

// checkFuzzCache makes sure the cache took at most the entry of req's
// question, and only with the made-up response that answered it.
func checkFuzzCache(t *testing.T, fwd *Forwarder, req *dns.Msg, before int, sent *dns.Msg) {
	t.Helper()
	s := fwd.settings.Load()
	key := questionOf(req).key(s.upstream)
	e, cached := s.cache.get(key, fwd.now())
	switch grew := cacheAdds(fwd) - before; {
	case grew == 0 && !cached:
		return
	case grew != 1 || !cached:
		t.Fatalf("the cache took %d entries, the question's entry cached: %v", grew, cached)
	case sent == nil || e.reply().Rcode != sent.Rcode || len(e.reply().Answer) != len(sent.Answer):
		t.Fatalf("cached %v\nbut the upstream sent no such answer to the question (%v)", e.reply(), sent)
	}
}

// fuzzSeeds are replies worth starting from: an answer, NXDOMAIN with a
// SOA, a truncated reply, one with a cookie, and bytes that do not parse.
func fuzzSeeds() [][]byte {
	answer := new(dns.Msg).SetQuestion("f.example.org.", dns.TypeA)
	answer.Response = true
	answer.Answer = []dns.RR{rr("f.example.org. 300 IN A 192.0.2.1")}
	nx := answer.Copy()
	nx.Rcode, nx.Answer = dns.RcodeNameError, nil
	nx.Ns = []dns.RR{rr("example.org. 300 IN SOA ns.example.org. admin.example.org. 1 7200 900 1209600 60")}
	tc := answer.Copy()
	tc.Truncated = true
	var out [][]byte
	for _, m := range []*dns.Msg{answer, nx, tc} {
		packed, _ := m.Pack()
		out = append(out, packed)
	}
	odd := append([]byte(nil), out[0]...)
	odd[0] |= 1 // made-up response with the query's cookie
	return append(out, odd, []byte{0, 1, 2}, nil)
}
