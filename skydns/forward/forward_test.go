package forward

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/miekg/dns"
)

func TestForwarding(t *testing.T) {
	up := startUpstream(t, answerA("192.0.2.10", 300))
	f, _, _ := testForwarder(t, testConfig(up.addr))

	t.Run("an outside name gets the upstream's answer", func(t *testing.T) {
		m := ask(t, f, "www.example.org.", dns.TypeA)
		wantA(t, m, "192.0.2.10", 300)
		if !m.RecursionAvailable || m.Authoritative {
			t.Errorf("RA %v AA %v, want RA and not AA", m.RecursionAvailable, m.Authoritative)
		}
	})

	t.Run("the client's question comes back as asked, in its case", func(t *testing.T) {
		m := ask(t, f, "WwW.ExAmple.ORG.", dns.TypeA)
		if got := m.Question[0].Name; got != "WwW.ExAmple.ORG." {
			t.Errorf("question %q, want the client's spelling", got)
		}
	})

	t.Run("an EDNS query gets an OPT record back, a plain one none", func(t *testing.T) {
		req := query("edns.example.org.", dns.TypeA)
		req.SetEdns0(4096, true)
		m := serve(t, f, req, localClient)
		if opt := m.IsEdns0(); opt == nil || !opt.Do() || opt.UDPSize() != udpSize || len(m.Extra) != 1 {
			t.Errorf("extra %v, want one OPT of size %d with DO", m.Extra, udpSize)
		}
		if opt := ask(t, f, "plain.example.org.", dns.TypeA).IsEdns0(); opt != nil {
			t.Errorf("OPT %v in the reply to a query without one", opt)
		}
	})
}

func TestTruncatedReplyIsAskedAgainOverTCP(t *testing.T) {
	up := startUpstream(t, func(req *dns.Msg, tcp bool) *dns.Msg {
		if !tcp {
			m := new(dns.Msg).SetReply(req)
			m.Truncated = true
			return m
		}
		return answerA("192.0.2.20", 60)(req, tcp)
	})
	f, _, _ := testForwarder(t, testConfig(up.addr))

	wantA(t, ask(t, f, "big.example.org.", dns.TypeA), "192.0.2.20", 60)
	if up.udp.Load() != 1 || up.tcp.Load() != 1 {
		t.Errorf("upstream saw %d UDP and %d TCP queries, want one of each", up.udp.Load(), up.tcp.Load())
	}
	if got := value(f.metrics.tcpRetries); got != 1 {
		t.Errorf("tcp retries %v, want 1", got)
	}
}

// TestForceTCPAsksOverTCPOnly: CoreDNS's force_tcp (--forward-tcp). The
// upstream drops UDP queries, so an answer proves TCP was asked first.
func TestForceTCPAsksOverTCPOnly(t *testing.T) {
	up := startUpstream(t, func(req *dns.Msg, tcp bool) *dns.Msg {
		if !tcp {
			return nil
		}
		return answerA("192.0.2.21", 60)(req, tcp)
	})
	cfg := testConfig(up.addr)
	cfg.ForceTCP = true
	f, _, _ := testForwarder(t, cfg)

	wantA(t, ask(t, f, "tcp.example.org.", dns.TypeA), "192.0.2.21", 60)
	wantA(t, ask(t, f, "TCP2.example.org.", dns.TypeA), "192.0.2.21", 60)
	if up.udp.Load() != 0 || up.tcp.Load() != 2 {
		t.Errorf("upstream saw %d UDP and %d TCP queries, want 0 and 2", up.udp.Load(), up.tcp.Load())
	}
}

// TestExceptedNamesAreNotForwarded: CoreDNS's forward except
// (--forward-except). An excepted name gets SERVFAIL without a query
// upstream; a name beside it, and one of a stub domain inside it, still go.
func TestExceptedNamesAreNotForwarded(t *testing.T) {
	up, stub := startUpstream(t, answerA("192.0.2.22", 60)), startUpstream(t, answerA("192.0.2.23", 60))
	cfg := testConfig(up.addr)
	cfg.Except = []string{"Corp.Example", "internal."}
	cfg.StubDomains = []string{"dc1.corp.example=" + stub.addr}
	f, _, _ := testForwarder(t, cfg)

	wantRcode(t, ask(t, f, "db.corp.example.", dns.TypeA), dns.RcodeServerFailure)
	wantRcode(t, ask(t, f, "CORP.example.", dns.TypeA), dns.RcodeServerFailure)
	wantRcode(t, ask(t, f, "x.internal.", dns.TypeA), dns.RcodeServerFailure)
	if up.queries() != 0 {
		t.Errorf("the upstream saw %d queries for excepted names, want 0", up.queries())
	}
	wantA(t, ask(t, f, "corp.example.org.", dns.TypeA), "192.0.2.22", 60)
	wantA(t, ask(t, f, "db.dc1.corp.example.", dns.TypeA), "192.0.2.23", 60)
}

func TestRotation(t *testing.T) {
	t.Run("a black-holed upstream is passed over within the deadline and then tried last", func(t *testing.T) {
		hole, good := blackHole(t), startUpstream(t, answerA("192.0.2.30", 60))
		cfg := testConfig(hole.addr, good.addr)
		cfg.ForwardTimeout, cfg.ForwardDeadline = 200*time.Millisecond, 2*time.Second
		f, _, _ := testForwarder(t, cfg)

		start := time.Now()
		for _, name := range []string{"a.example.org.", "b.example.org.", "c.example.org.", "d.example.org."} {
			wantA(t, ask(t, f, name, dns.TypeA), "192.0.2.30", 60)
		}
		if elapsed := time.Since(start); elapsed > time.Second {
			t.Errorf("4 queries took %s, want one timeout (200ms) at most", elapsed)
		}
		if got := hole.received.Load(); got != 1 {
			t.Errorf("the black hole got %d queries, want 1 (then it is held back)", got)
		}
		if got := value(f.metrics.upstream.WithLabelValues(hole.addr, resultTimeout)); got != 1 {
			t.Errorf("timeouts counted for the black hole: %v, want 1", got)
		}
	})

	t.Run("healthy upstreams take turns", func(t *testing.T) {
		one, two := startUpstream(t, answerA("192.0.2.31", 60)), startUpstream(t, answerA("192.0.2.32", 60))
		f, _, _ := testForwarder(t, testConfig(one.addr, two.addr))
		for _, name := range []string{"a.example.org.", "b.example.org.", "c.example.org.", "d.example.org."} {
			wantRcode(t, ask(t, f, name, dns.TypeA), dns.RcodeSuccess)
		}
		if one.queries() != 2 || two.queries() != 2 {
			t.Errorf("queries %d and %d, want 2 each", one.queries(), two.queries())
		}
	})

	t.Run("when every upstream fails the client gets SERVFAIL by the deadline", func(t *testing.T) {
		cfg := testConfig(closedPort(t), blackHole(t).addr, closedPort(t))
		cfg.ForwardTimeout, cfg.ForwardDeadline = 200*time.Millisecond, 400*time.Millisecond
		f, _, _ := testForwarder(t, cfg)
		start := time.Now()
		wantRcode(t, ask(t, f, "www.example.org.", dns.TypeA), dns.RcodeServerFailure)
		// One timeout (200ms) is waited, well before the deadline; the
		// bound leaves room for a loaded machine, and still catches a hang.
		if elapsed := time.Since(start); elapsed > cfg.ForwardDeadline+300*time.Millisecond {
			t.Errorf("SERVFAIL after %s, want by the deadline (%s)", elapsed, cfg.ForwardDeadline)
		}
		if got := value(f.metrics.servfail); got != 1 {
			t.Errorf("servfail counter %v, want 1", got)
		}
	})

	t.Run("upstreams that refuse are passed over and not held failed", func(t *testing.T) {
		refusing := startUpstream(t, func(req *dns.Msg, _ bool) *dns.Msg {
			return new(dns.Msg).SetRcode(req, dns.RcodeRefused)
		})
		good := startUpstream(t, answerA("192.0.2.33", 60))
		f, _, _ := testForwarder(t, testConfig(refusing.addr, good.addr))
		for _, name := range []string{"a.example.org.", "b.example.org.", "c.example.org.", "d.example.org."} {
			wantA(t, ask(t, f, name, dns.TypeA), "192.0.2.33", 60)
		}
		if refusing.queries() != 2 {
			t.Errorf("the refusing upstream got %d queries, want 2, its turns (it is not held back)", refusing.queries())
		}
	})

	t.Run("a query whose context ends gets SERVFAIL at once", func(t *testing.T) {
		cfg := testConfig(blackHole(t).addr)
		f, _, _ := testForwarder(t, cfg)
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		m := f.ServeForward(ctx, query("slow.example.org.", dns.TypeA), localClient)
		wantRcode(t, m, dns.RcodeServerFailure)
	})
}

func TestAdmission(t *testing.T) {
	up := startUpstream(t, answerA("192.0.2.40", 60))
	cfg := testConfig(up.addr)
	cfg.AllowRecursion = []string{"127.0.0.1/32"}
	f, _, _ := testForwarder(t, cfg)

	t.Run("a client outside the ACL gets REFUSED without recursion available", func(t *testing.T) {
		m := serve(t, f, query("www.example.org.", dns.TypeA), netip.MustParseAddr("127.0.0.2"))
		wantRcode(t, m, dns.RcodeRefused)
		if m.RecursionAvailable || len(m.Answer) != 0 {
			t.Errorf("RA %v answer %v, want neither", m.RecursionAvailable, m.Answer)
		}
		if got := value(f.metrics.refused.WithLabelValues("acl")); got != 1 {
			t.Errorf("refused{acl} %v, want 1", got)
		}
	})

	t.Run("a client inside the ACL seen through an IPv6 socket is served", func(t *testing.T) {
		m := serve(t, f, query("www.example.org.", dns.TypeA), netip.MustParseAddr("::ffff:127.0.0.1"))
		wantA(t, m, "192.0.2.40", 60)
	})

	refusedLocally := []struct {
		name  string
		req   func() *dns.Msg
		rcode int
	}{
		{"a query without RD is REFUSED", func() *dns.Msg {
			m := query("norecurse.example.org.", dns.TypeA)
			m.RecursionDesired = false
			return m
		}, dns.RcodeRefused},
		{"a zone transfer is REFUSED", func() *dns.Msg { return query("example.org.", dns.TypeAXFR) }, dns.RcodeRefused},
		{"a CHAOS query is REFUSED", func() *dns.Msg {
			m := query("version.bind.", dns.TypeTXT)
			m.Question[0].Qclass = dns.ClassCHAOS
			return m
		}, dns.RcodeRefused},
		{"a message without a question is FORMERR", func() *dns.Msg { return &dns.Msg{MsgHdr: dns.MsgHdr{Id: 7, RecursionDesired: true}} }, dns.RcodeFormatError},
		{"a NOTIFY is NOTIMP", func() *dns.Msg {
			m := query("example.org.", dns.TypeSOA)
			m.Opcode = dns.OpcodeNotify
			return m
		}, dns.RcodeNotImplemented},
	}
	for _, tt := range refusedLocally {
		t.Run(tt.name+" and never reaches the upstream", func(t *testing.T) {
			before := up.queries()
			wantRcode(t, serve(t, f, tt.req(), localClient), tt.rcode)
			if up.queries() != before {
				t.Errorf("the upstream got %d queries, want none", up.queries()-before)
			}
		})
	}
}

func TestACL(t *testing.T) {
	tests := []struct {
		name  string
		allow []string
		addrs map[string]bool
	}{
		{"the default ACL allows loopback and the private ranges", DefaultAllowRecursion, map[string]bool{
			"127.0.0.1": true, "::1": true, "10.244.1.7": true, "172.31.255.1": true, "192.168.0.9": true,
			"100.64.0.1": true, "fd00:10:244::7": true, "::ffff:10.1.2.3": true,
			"8.8.8.8": false, "172.32.0.1": false, "2001:db8::1": false, "100.128.0.1": false,
		}},
		{"a bare address allows that address only", []string{"127.0.0.1"}, map[string]bool{
			"127.0.0.1": true, "127.0.0.2": false,
		}},
		{"an empty ACL allows no one", nil, map[string]bool{"127.0.0.1": false, "::1": false}},
		{"0.0.0.0/0 and ::/0 allow everyone", []string{"0.0.0.0/0", "::/0"}, map[string]bool{
			"8.8.8.8": true, "2001:db8::1": true,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig("127.0.0.1:53")
			cfg.AllowRecursion = tt.allow
			f, _, _ := testForwarder(t, cfg)
			for addr, want := range tt.addrs {
				if got := f.RecursionAllowed(netip.MustParseAddr(addr)); got != want {
					t.Errorf("allows %s: %v, want %v", addr, got, want)
				}
			}
		})
	}
}
