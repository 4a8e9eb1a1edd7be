package fastpath

import (
	"bytes"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"

	"github.com/miekg/dns"
	"go.uber.org/goleak"

	"github.com/kubesky/kubesky/internal/dnstest"
	"github.com/kubesky/kubesky/internal/polltest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testServer is a fast path on 127.0.0.1 with an ordinary miekg/dns server
// behind it that answers every query it gets with one TXT "ordinary".
type testServer struct {
	*Server
	stats *Stats
	addr  string
}

func startServer(t *testing.T, src Source, sockets int) *testServer {
	t.Helper()
	conns, err := ListenUDP("127.0.0.1:0", sockets)
	if err != nil {
		t.Fatalf("ListenUDP: %v", err)
	}
	stats := NewStats("test.")
	s, err := Start(Config{Conns: conns, Source: src, MaxUDPSize: fakeMaxUDPSize, Stats: stats})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	dnstest.Serve(t, &dns.Server{PacketConn: s.Fallback(), Handler: dns.HandlerFunc(answerOrdinary)})
	return &testServer{Server: s, stats: stats, addr: conns[0].LocalAddr().String()}
}

func answerOrdinary(w dns.ResponseWriter, req *dns.Msg) {
	resp := new(dns.Msg).SetReply(req)
	resp.Answer = []dns.RR{&dns.TXT{Hdr: dns.RR_Header{Name: req.Question[0].Name, Rrtype: dns.TypeTXT, Class: dns.ClassINET},
		Txt: []string{"ordinary", w.RemoteAddr().String()}}}
	w.WriteMsg(resp)
}

func isOrdinary(m *dns.Msg) bool {
	txt, ok := m.Answer[0].(*dns.TXT)
	return len(m.Answer) == 1 && ok && txt.Txt[0] == "ordinary"
}

func TestServerAnswersPlainQueriesItself(t *testing.T) {
	s := startServer(t, &fakeAnswers{ttl: 30}, 1)
	resp := dnstest.Exchange(t, "udp", s.addr, aQuery("n.2.test.", 1232))
	if len(resp.Answer) != 2 || resp.IsEdns0() == nil {
		t.Fatalf("got %v, want 2 A records and an OPT", resp)
	}
	if n, p := s.stats.Totals().FastAnswers, s.stats.Totals().Passed; n != 1 || p != 0 {
		t.Fatalf("fast answers %d, passed %d; want 1, 0", n, p)
	}
	// The latency is observed once the answer is written, after the client
	// may have read it.
	polltest.True(t, "latency observed for the query", func() bool {
		var count uint64
		s.stats.Totals().EachLatency(func(_, _ string, h Histogram) { count += h.Count })
		return count == 1
	})
}

func TestAnswersLargerThan512BytesAreSentWhole(t *testing.T) {
	s := startServer(t, &fakeAnswers{ttl: 30}, 1)
	// 200 A records: ~3.2 kB, more than an answer slot starts with; a small
	// answer after each shows the grown slot is cut to the new length.
	for range 3 {
		if resp := dnstest.Exchange(t, "udp", s.addr, aQuery("n.200.test.", 4096)); len(resp.Answer) != 200 {
			t.Fatalf("got %d A records, want 200", len(resp.Answer))
		}
		if resp := dnstest.Exchange(t, "udp", s.addr, aQuery("n.1.test.", 4096)); len(resp.Answer) != 1 {
			t.Fatalf("got %d A records, want 1", len(resp.Answer))
		}
	}
	if n, p := s.stats.Totals().FastAnswers, s.stats.Totals().Passed; n != 6 || p != 0 {
		t.Fatalf("fast answers %d, passed %d; want 6, 0", n, p)
	}
}

func TestServerPassesTheRestToTheOrdinaryServer(t *testing.T) {
	s := startServer(t, &fakeAnswers{ttl: 30}, 1)
	do := aQuery("n.2.test.", 1232)
	do.SetEdns0(1232, true)
	tests := []struct {
		name string
		q    *dns.Msg
	}{
		{"a query with the DO bit", do},
		{"a name the source declines", aQuery("elsewhere.example.", 0)},
		{"an answer that needs TC", aQuery("n.40.test.", 0)},
	}
	for i, tc := range tests {
		t.Run(tc.name+" is answered by the ordinary server, through the port", func(t *testing.T) {
			resp := dnstest.Exchange(t, "udp", s.addr, tc.q)
			if !isOrdinary(resp) {
				t.Fatalf("got %v, want the ordinary server's answer", resp)
			}
			if p := s.stats.Totals().Passed; p != uint64(i+1) {
				t.Fatalf("passed %d queries, want %d", p, i+1)
			}
		})
	}
	t.Run("the ordinary server sees the client's address", func(t *testing.T) {
		conn, err := net.Dial("udp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		c := &dns.Conn{Conn: conn}
		if err := c.WriteMsg(aQuery("elsewhere.example.", 0)); err != nil {
			t.Fatal(err)
		}
		resp, err := c.ReadMsg()
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.Answer[0].(*dns.TXT).Txt[1]; got != conn.LocalAddr().String() {
			t.Fatalf("the ordinary server saw %s, want %s", got, conn.LocalAddr())
		}
	})
}

func TestServerSpreadsQueriesOverItsSockets(t *testing.T) {
	const sockets, clients = 4, 32
	s := startServer(t, &fakeAnswers{ttl: 30}, sockets)
	for i := range clients {
		if resp := dnstest.Exchange(t, "udp", s.addr, aQuery(fmt.Sprintf("n.%d.test.", i%5+1), 0)); len(resp.Answer) != i%5+1 {
			t.Fatalf("query %d: got %d answers, want %d", i, len(resp.Answer), i%5+1)
		}
	}
	busy := 0
	for _, sh := range s.stats.snapshotShards() {
		if _, n := addAll(nil, sh.answers); n > 0 {
			busy++
		}
	}
	if busy < 2 {
		t.Fatalf("%d of %d sockets answered %d clients; SO_REUSEPORT should spread them", busy, sockets, clients)
	}
}

func TestCloseFreesThePort(t *testing.T) {
	conns, err := ListenUDP("127.0.0.1:0", 3)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Start(Config{Conns: conns, Source: &fakeAnswers{}, MaxUDPSize: fakeMaxUDPSize})
	if err != nil {
		t.Fatal(err)
	}
	addr := conns[0].LocalAddr().String()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Fatalf("port still bound after Close: %v", err)
	}
	pc.Close()
}

func TestStartRejectsAnIncompleteConfig(t *testing.T) {
	conns, err := ListenUDP("127.0.0.1:0", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll(conns)
	for _, cfg := range []Config{
		{Source: &fakeAnswers{}, MaxUDPSize: 4096},
		{Conns: conns, MaxUDPSize: 4096},
		{Conns: conns, Source: &fakeAnswers{}, MaxUDPSize: 100},
	} {
		if s, err := Start(cfg); err == nil {
			s.Close()
			t.Errorf("Start(%+v) succeeded", cfg)
		}
	}
}

func TestListenUDPRejectsBadInput(t *testing.T) {
	for _, tc := range []struct {
		addr string
		n    int
	}{{"127.0.0.1:0", 0}, {"127.0.0.1", 1}, {"256.0.0.1:0", 2}} {
		t.Run(fmt.Sprintf("%q with %d sockets is an error", tc.addr, tc.n), func(t *testing.T) {
			conns, err := ListenUDP(tc.addr, tc.n)
			if err == nil {
				closeAll(conns)
				t.Fatal("no error")
			}
		})
	}
	t.Run("a port taken without SO_REUSEPORT is an error", func(t *testing.T) {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer pc.Close()
		if conns, err := ListenUDP(pc.LocalAddr().String(), 2); err == nil {
			closeAll(conns)
			t.Fatal("no error")
		}
	})
}

// panicking is a Source whose Fill panics for "boom.test." names.
type panicking struct{ fakeAnswers }

func (p *panicking) Fill(name string, qtype uint16) (Answer, bool) {
	if name == "boom.test." {
		panic("answers bug")
	}
	return p.fakeAnswers.Fill(name, qtype)
}

func TestAPanicWhileAnsweringIsAnsweredServfailAndTheReaderGoesOn(t *testing.T) {
	conns, err := ListenUDP("127.0.0.1:0", 1)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var packets [][]byte
	s, err := Start(Config{Conns: conns, Source: &panicking{}, MaxUDPSize: fakeMaxUDPSize,
		Panicked: func(pkt []byte, _ any) { mu.Lock(); packets = append(packets, slices.Clone(pkt)); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	addr := conns[0].LocalAddr().String()
	q := new(dns.Msg).SetQuestion("boom.test.", dns.TypeA)
	q.CheckingDisabled = true
	resp := dnstest.Exchange(t, "udp", addr, q)
	if resp.Rcode != dns.RcodeServerFailure || !resp.Response || !resp.RecursionDesired || !resp.CheckingDisabled ||
		len(resp.Question) != 1 || resp.Question[0] != q.Question[0] || len(resp.Answer)+len(resp.Ns)+len(resp.Extra) != 0 {
		t.Fatalf("got\n%v\nwant SERVFAIL with the question, RD and CD, and no records", resp)
	}
	if resp := dnstest.Exchange(t, "udp", addr, new(dns.Msg).SetQuestion("n.2.test.", dns.TypeA)); len(resp.Answer) != 2 {
		t.Fatalf("after the panic: %d answers, want 2", len(resp.Answer))
	}
	mu.Lock()
	defer mu.Unlock()
	want, _ := q.Pack()
	if len(packets) != 1 || !bytes.Equal(packets[0], want) {
		t.Fatalf("Panicked told of %x, want the query %x once", packets, want)
	}
}
