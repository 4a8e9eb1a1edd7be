package forward

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// datagram is one packet a scripted upstream sends; elsewhere sends it
// from another socket on 127.0.0.1, not the upstream's address and port.
type datagram struct {
	payload   []byte
	elsewhere bool
}

// scriptedUpstream is a UDP upstream on 127.0.0.1 that answers each query
// with the datagrams its script returns, in order.
type scriptedUpstream struct {
	addr string

	mu    sync.Mutex
	names []string            // guarded by mu; the query names received, as sent
	ports []uint16            // guarded by mu; the source ports of the queries
	ids   []uint16            // guarded by mu; the query IDs
	opts  []*dns.EDNS0_COOKIE // guarded by mu; the cookies received, nil for none
}

func startScripted(t testing.TB, script func(q *dns.Msg) []datagram) *scriptedUpstream {
	t.Helper()
	pc, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	other, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	u := &scriptedUpstream{addr: pc.LocalAddr().String()}
	var wg sync.WaitGroup
	wg.Go(func() {
		u.serve(pc, func(q *dns.Msg, from netip.AddrPort) {
			for _, d := range script(q) {
				conn := pc
				if d.elsewhere {
					conn = other
				}
				_, _ = conn.WriteToUDPAddrPort(d.payload, from)
			}
		})
	})
	t.Cleanup(func() {
		pc.Close()
		other.Close()
		wg.Wait()
	})
	return u
}

// serve reads queries from conn until it is closed, records them and
// hands them to answer.
func (u *scriptedUpstream) serve(conn *net.UDPConn, answer func(q *dns.Msg, from netip.AddrPort)) {
	buf := make([]byte, 65535)
	for {
		n, from, err := conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		q := new(dns.Msg)
		if q.Unpack(buf[:n]) != nil || len(q.Question) != 1 {
			continue
		}
		u.record(q, from)
		answer(q, from)
	}
}

func (u *scriptedUpstream) record(q *dns.Msg, from netip.AddrPort) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.names = append(u.names, q.Question[0].Name)
	u.ports = append(u.ports, from.Port())
	u.ids = append(u.ids, q.Id)
	var c *dns.EDNS0_COOKIE
	if opt := q.IsEdns0(); opt != nil {
		for _, o := range opt.Option {
			if oc, ok := o.(*dns.EDNS0_COOKIE); ok {
				c = oc
			}
		}
	}
	u.opts = append(u.opts, c)
}

// serverCookie is the server cookie the test upstreams hand out.
const serverCookie = "00112233445566778899aabbccddeeff"

// realAnswer answers q with A ip, its question as sent and, when q carries a
// cookie, q's client cookie and serverCookie.
func realAnswer(q *dns.Msg, ip string) *dns.Msg {
	m := new(dns.Msg).SetReply(q)
	m.Answer = []dns.RR{rr(fmt.Sprintf("%s 300 IN A %s", q.Question[0].Name, ip))}
	m.SetEdns0(udpSize, false)
	if c := cookieOf(q); c != "" {
		m.IsEdns0().Option = []dns.EDNS0{&dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: c[:16] + serverCookie}}
	}
	return m
}

func pack(t testing.TB, m *dns.Msg) []byte {
	out, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestEveryQueryHasARandomPortAndID(t *testing.T) {
	const n = 64
	up := startScripted(t, func(q *dns.Msg) []datagram { return []datagram{{payload: pack(t, realAnswer(q, "192.0.2.80"))}} })
	f, _, _ := testForwarder(t, testConfig(up.addr))
	for i := range n {
		wantA(t, ask(t, f, fmt.Sprintf("n%d.example.org.", i), dns.TypeA), "192.0.2.80", 300)
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	ports, ids, steps := map[uint16]bool{}, map[uint16]bool{}, 0
	for i := range n {
		ports[up.ports[i]], ids[up.ids[i]] = true, true
		if i > 0 && up.ports[i] == up.ports[i-1]+1 {
			steps++
		}
	}
	// 64 draws from 28,000 ports or 65,536 IDs all differ with odds of
	// about 93% and 97%; three repeats are vanishingly rare.
	if len(ports) < n-3 || len(ids) < n-3 || steps > 3 {
		t.Errorf("%d queries used %d source ports (%d one above the last) and %d IDs, want about %d of each, in no order",
			n, len(ports), steps, len(ids), n)
	}
}

func TestForgedRepliesAreIgnoredAndTheRealAnswerTaken(t *testing.T) {
	tests := []struct {
		name   string
		reason string
		forge  func(real *dns.Msg) datagram
	}{
		{"a reply from another port", ignoredSource, func(m *dns.Msg) datagram {
			return datagram{payload: pack(t, poisoned(m)), elsewhere: true}
		}},
		{"a reply with another ID", ignoredID, func(m *dns.Msg) datagram {
			p := poisoned(m)
			p.Id++
			return datagram{payload: pack(t, p)}
		}},
		{"a reply cut after its header", ignoredMalformed, func(m *dns.Msg) datagram {
			return datagram{payload: pack(t, m)[:14]} // inside the question
		}},
		{"a query, not a response", ignoredMalformed, func(m *dns.Msg) datagram {
			p := poisoned(m)
			p.Response = false
			return datagram{payload: pack(t, p)}
		}},
		{"a reply to another name", ignoredQuestion, func(m *dns.Msg) datagram {
			p := poisoned(m)
			p.Question[0].Name = "other.example.org."
			return datagram{payload: pack(t, p)}
		}},
		{"a reply to another type", ignoredQuestion, func(m *dns.Msg) datagram {
			p := poisoned(m)
			p.Question[0].Qtype = dns.TypeAAAA
			return datagram{payload: pack(t, p)}
		}},
		{"a reply to another class", ignoredQuestion, func(m *dns.Msg) datagram {
			p := poisoned(m)
			p.Question[0].Qclass = dns.ClassCHAOS
			return datagram{payload: pack(t, p)}
		}},
		{"an error without a question", ignoredQuestion, func(m *dns.Msg) datagram {
			p := poisoned(m)
			p.Rcode, p.Question, p.Answer = dns.RcodeServerFailure, nil, nil
			return datagram{payload: pack(t, p)}
		}},
		{"a reply with the name in another case", ignoredCase, func(m *dns.Msg) datagram {
			p := poisoned(m)
			p.Question[0].Name = swapCase(p.Question[0].Name)
			return datagram{payload: pack(t, p)}
		}},
		{"a reply with another client cookie", ignoredCookie, func(m *dns.Msg) datagram {
			p := poisoned(m)
			p.IsEdns0().Option = []dns.EDNS0{&dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: "0102030405060708" + serverCookie}}
			return datagram{payload: pack(t, p)}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is ignored and the real answer that follows is served", func(t *testing.T) {
			up := startScripted(t, func(q *dns.Msg) []datagram {
				real := realAnswer(q, "192.0.2.81")
				return []datagram{tt.forge(real), {payload: pack(t, real)}}
			})
			f, _, _ := testForwarder(t, testConfig(up.addr))
			wantA(t, ask(t, f, "www.example.org.", dns.TypeA), "192.0.2.81", 300)
			// A forged change of case is seen twice: once in mixed case,
			// and in the plain query the forwarder falls back to.
			if got := value(f.metrics.ignored.WithLabelValues(tt.reason)); got < 1 {
				t.Errorf("ignored for %s: %v, want 1 or more", tt.reason, got)
			}
		})
	}
}

// poisoned is a copy of the real answer m pointing at the attacker.
func poisoned(m *dns.Msg) *dns.Msg {
	p := m.Copy()
	p.Answer = []dns.RR{rr(m.Question[0].Name + " 300 IN A 203.0.113.66")}
	return p
}

// swapCase turns every letter of s to the other case.
func swapCase(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r ^ 0x20
		}
		return r
	}, s)
}

func TestBadRepliesAloneTimeOut(t *testing.T) {
	up := startScripted(t, func(q *dns.Msg) []datagram {
		p := poisoned(realAnswer(q, "192.0.2.82"))
		p.Id++
		return []datagram{{payload: pack(t, p)}, {payload: []byte{1, 2, 3}}}
	})
	f, _, _ := testForwarder(t, testConfig(up.addr))
	wantRcode(t, ask(t, f, "www.example.org.", dns.TypeA), dns.RcodeServerFailure)
	if got := value(f.metrics.upstream.WithLabelValues(up.addr, resultTimeout)); got != 1 {
		t.Errorf("timeouts %v, want 1: bad replies only make the forwarder read on", got)
	}
	if got := value(f.metrics.ignored.WithLabelValues(ignoredID)); got != 2 {
		t.Errorf("ignored for their ID: %v, want 2", got)
	}
	if f.settings.Load().cache.len() != 0 {
		t.Error("something was cached")
	}
}

func TestQueryNamesGoOutInRandomCase(t *testing.T) {
	up := startScripted(t, func(q *dns.Msg) []datagram { return []datagram{{payload: pack(t, realAnswer(q, "192.0.2.83"))}} })
	f, _, _ := testForwarder(t, testConfig(up.addr))
	const name = "abcdefghijklmnopqrstuvwxyz.example.org." // 36 letters
	m := ask(t, f, strings.ToUpper(name), dns.TypeA)
	wantRcode(t, m, dns.RcodeSuccess)
	if m.Question[0].Name != strings.ToUpper(name) || m.Answer[0].Header().Name != name {
		t.Errorf("question %q answer %v: want the client's question and the name in lower case", m.Question[0].Name, m.Answer[0])
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	sent := up.names[0]
	if !strings.EqualFold(sent, name) || sent == name || sent == strings.ToUpper(name) {
		t.Errorf("the upstream was asked %q, want %q in mixed case", sent, name)
	}
}

func TestAnUpstreamThatLowersCaseGetsPlainNames(t *testing.T) {
	up := startScripted(t, func(q *dns.Msg) []datagram {
		m := realAnswer(q, "192.0.2.84")
		m.Question[0].Name = strings.ToLower(m.Question[0].Name)
		return []datagram{{payload: pack(t, m)}}
	})
	f, clock, _ := testForwarder(t, testConfig(up.addr))
	for _, name := range []string{"first.example.org.", "second.example.org."} {
		m := ask(t, f, name, dns.TypeA)
		wantRcode(t, m, dns.RcodeSuccess)
	}
	if got := value(f.metrics.ignored.WithLabelValues(ignoredCase)); got != 1 {
		t.Errorf("replies ignored for their case: %v, want 1 (then names go out plain)", got)
	}
	clock.Advance(caseHold)
	wantRcode(t, ask(t, f, "third.example.org.", dns.TypeA), dns.RcodeSuccess)
	up.mu.Lock()
	defer up.mu.Unlock()
	// first: mixed, then plain again; second: plain; third, an hour
	// later: mixed, then plain.
	want := []bool{true, false, false, true, false}
	if len(up.names) != len(want) {
		t.Fatalf("the upstream got %q, want %d queries", up.names, len(want))
	}
	for i, mixed := range want {
		if got := up.names[i] != strings.ToLower(up.names[i]); got != mixed {
			t.Errorf("query %d was %q, mixed case %v, want %v", i, up.names[i], got, mixed)
		}
	}
}

func TestCookies(t *testing.T) {
	var withCookie atomic.Int32
	up := startScripted(t, func(q *dns.Msg) []datagram {
		m := realAnswer(q, "192.0.2.85")
		if withCookie.Load() == 0 {
			m.IsEdns0().Option = nil
		}
		return []datagram{{payload: pack(t, m)}}
	})
	other := startScripted(t, func(q *dns.Msg) []datagram { return []datagram{{payload: pack(t, realAnswer(q, "192.0.2.86"))}} })
	cfg := testConfig(up.addr)
	cfg.StubDomains = []string{"corp=" + other.addr}
	cfg.ForwardTimeout, cfg.ForwardDeadline = 200*time.Millisecond, 200*time.Millisecond
	f, clock, _ := testForwarder(t, cfg)

	withCookie.Store(1)
	wantA(t, ask(t, f, "a.example.org.", dns.TypeA), "192.0.2.85", 300)
	wantA(t, ask(t, f, "b.example.org.", dns.TypeA), "192.0.2.85", 300)
	wantA(t, ask(t, f, "c.corp.", dns.TypeA), "192.0.2.86", 300)
	up.mu.Lock()
	first, second := up.opts[0], up.opts[1]
	up.mu.Unlock()
	other.mu.Lock()
	third := other.opts[0]
	other.mu.Unlock()

	t.Run("the first query sends a client cookie alone, later ones the server's too", func(t *testing.T) {
		if first == nil || len(first.Cookie) != 16 {
			t.Fatalf("first cookie %v, want 8 bytes", first)
		}
		if second == nil || second.Cookie != first.Cookie+serverCookie {
			t.Errorf("second cookie %v, want %s then the server cookie", second, first.Cookie)
		}
	})
	t.Run("each upstream has a client cookie of its own", func(t *testing.T) {
		if third == nil || third.Cookie[:16] == first.Cookie {
			t.Errorf("cookie %v to another upstream, want another client cookie than %s", third, first.Cookie)
		}
	})
	t.Run("once an upstream sent cookies, a reply without one is ignored", func(t *testing.T) {
		withCookie.Store(0)
		wantRcode(t, ask(t, f, "d.example.org.", dns.TypeA), dns.RcodeServerFailure)
		if got := value(f.metrics.ignored.WithLabelValues(ignoredNoCookie)); got != 1 {
			t.Errorf("ignored for lack of a cookie: %v, want 1", got)
		}
	})
	t.Run("after such a timeout the upstream is taken to have stopped doing cookies", func(t *testing.T) {
		wantA(t, ask(t, f, "e.example.org.", dns.TypeA), "192.0.2.85", 300)
	})
	t.Run("after cookieRotate a fresh client cookie goes out alone, then with the server's", func(t *testing.T) {
		withCookie.Store(1)
		clock.Advance(cookieRotate)
		wantA(t, ask(t, f, "f.example.org.", dns.TypeA), "192.0.2.85", 300)
		wantA(t, ask(t, f, "g.example.org.", dns.TypeA), "192.0.2.85", 300)
		up.mu.Lock()
		fresh, next := up.opts[len(up.opts)-2], up.opts[len(up.opts)-1]
		up.mu.Unlock()
		if fresh == nil || len(fresh.Cookie) != 16 || fresh.Cookie == first.Cookie {
			t.Fatalf("cookie after rotation %v, want a client cookie alone other than %s", fresh, first.Cookie)
		}
		if next == nil || next.Cookie != fresh.Cookie+serverCookie {
			t.Errorf("the next cookie %v, want %s then the server cookie", next, fresh.Cookie)
		}
	})
}

// TestARotatedClientCookieAnswersTheQueriesSentWithIt checks that a reply
// to a query sent before the client cookie changed is still taken, that
// its server cookie is not paired with the new client cookie, and that
// older or foreign client cookies and missing cookies are not taken.
func TestARotatedClientCookieAnswersTheQueriesSentWithIt(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	p := &peer{}
	reply := func(cookie string) *dns.Msg {
		m := new(dns.Msg).SetQuestion("a.example.org.", dns.TypeA)
		m.SetEdns0(1232, false)
		if cookie != "" {
			m.IsEdns0().Option = []dns.EDNS0{&dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: cookie}}
		}
		return m
	}
	first := p.cookie(t0).Cookie
	if why := p.checkCookie(reply(first + serverCookie)); why != "" {
		t.Fatalf("a reply with our cookie: ignored for %q", why)
	}
	if got := p.cookie(t0.Add(cookieRotate - time.Second)).Cookie; got != first+serverCookie {
		t.Fatalf("cookie before cookieRotate %s, want %s", got, first+serverCookie)
	}
	second := p.cookie(t0.Add(cookieRotate)).Cookie
	if len(second) != 16 || second == first {
		t.Fatalf("cookie at cookieRotate %s, want a fresh client cookie alone", second)
	}
	const otherServer = "ffeeddccbbaa99887766554433221100"
	for _, tc := range []struct {
		name, cookie, want string
	}{
		{"a reply to a query sent with the old cookie", first + serverCookie, ""},
		{"a reply without a cookie", "", ignoredNoCookie},
		{"a reply with a foreign client cookie", "0102030405060708" + serverCookie, ignoredCookie},
		{"a reply with the new cookie", second + otherServer, ""},
	} {
		if why := p.checkCookie(reply(tc.cookie)); why != tc.want {
			t.Errorf("%s: ignored for %q, want %q", tc.name, why, tc.want)
		}
	}
	if got := p.cookie(t0.Add(cookieRotate)).Cookie; got != second+otherServer {
		t.Errorf("cookie after the new server cookie %s, want %s", got, second+otherServer)
	}
	p.cookie(t0.Add(2 * cookieRotate))
	if why := p.checkCookie(reply(first + serverCookie)); why != ignoredCookie {
		t.Errorf("a reply with the cookie two rotations back: ignored for %q, want %q", why, ignoredCookie)
	}
}

// TestAnEchoedClientCookieIsNoCookie checks that an upstream that does not
// do cookies but echoes the OPT record it got, client cookie included (as
// CoreDNS's hosts plugin does), is answered, while a client cookie alone
// that is not ours is still ignored.
func TestAnEchoedClientCookieIsNoCookie(t *testing.T) {
	var forge atomic.Bool
	up := startScripted(t, func(q *dns.Msg) []datagram {
		m := realAnswer(q, "192.0.2.87")
		c := cookieOf(q)[:16]
		if forge.Load() {
			c = "0123456789abcdef"
		}
		m.IsEdns0().Option = []dns.EDNS0{&dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: c}}
		return []datagram{{payload: pack(t, m)}}
	})
	cfg := testConfig(up.addr)
	cfg.ForwardTimeout, cfg.ForwardDeadline = 200*time.Millisecond, 200*time.Millisecond
	f, _, _ := testForwarder(t, cfg)
	wantA(t, ask(t, f, "a.example.org.", dns.TypeA), "192.0.2.87", 300)
	wantA(t, ask(t, f, "b.example.org.", dns.TypeA), "192.0.2.87", 300)
	forge.Store(true)
	wantRcode(t, ask(t, f, "c.example.org.", dns.TypeA), dns.RcodeServerFailure)
	if got := value(f.metrics.ignored.WithLabelValues(ignoredCookie)); got != 1 {
		t.Errorf("ignored for a wrong cookie: %v, want 1", got)
	}
}
