package dnsserver

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
	"go.uber.org/goleak"

	"github.com/kubesky/kubesky/internal/dnstest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// records answers "big.test." with n A records and "glue.test." with 10 A
// records in the answer and n in the additional section; anything else
// gets NXDOMAIN. It is the data source of these transport tests.
func records(n int) RespondFunc {
	return func(_ context.Context, q Query) *dns.Msg {
		req := q.Msg
		resp := new(dns.Msg).SetReply(req)
		switch req.Question[0].Name {
		case "big.test.":
			resp.Answer = aRecords("big.test.", n)
		case "glue.test.":
			resp.Answer = aRecords("glue.test.", 10)
			resp.Extra = aRecords("extra.test.", n)
		case "nil.test.":
			return nil
		case "cached.test.":
			resp.Answer = aRecords("cached.test.", 1)
			resp.Extra = sharedExtra
		case "who.test.":
			txt := q.Proto + " " + q.Client.String()
			resp.Answer = []dns.RR{&dns.TXT{Hdr: dns.RR_Header{Name: "who.test.", Rrtype: dns.TypeTXT, Class: dns.ClassINET}, Txt: []string{txt}}}
		default:
			resp.Rcode = dns.RcodeNameError
		}
		return resp
	}
}

func aRecords(name string, n int) []dns.RR {
	rrs := make([]dns.RR, n)
	for i := range n {
		ip := netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)})
		rrs[i] = &dns.A{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 30}, A: ip.AsSlice()}
	}
	return rrs
}

// sharedExtra stands for a cached message's additional section: answers
// share it, so the server must not write into it (spare capacity included).
var sharedExtra = append(make([]dns.RR, 0, 8), aRecords("glue.test.", 1)...)

type testServer struct {
	*Server
	invalid atomic.Int64
}

func startServer(t *testing.T, a Responder) *testServer {
	t.Helper()
	return startServerWith(t, Config{Responder: a})
}

// startServerWith starts a server with cfg on a free 127.0.0.1 port,
// counting invalid packets.
func startServerWith(t *testing.T, cfg Config) *testServer {
	t.Helper()
	ts := &testServer{}
	cfg.Addr, cfg.Invalid = "127.0.0.1:0", func(error) { ts.invalid.Add(1) }
	s, err := Start(cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	ts.Server = s
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return ts
}

func query(name string, qtype uint16, ednsSize uint16) *dns.Msg {
	m := new(dns.Msg).SetQuestion(name, qtype)
	if ednsSize > 0 {
		m.SetEdns0(ednsSize, false)
	}
	return m
}

// exchangeSized sends m over proto and returns the response and its wire
// size, reading up to 64 KiB whatever m's EDNS size.
func exchangeSized(t *testing.T, proto, addr string, m *dns.Msg) (*dns.Msg, int) {
	t.Helper()
	c := &dns.Client{Net: proto, Timeout: 5 * time.Second, UDPSize: dns.MaxMsgSize}
	conn, err := c.Dial(addr)
	if err != nil {
		t.Fatalf("dial %s %s: %v", proto, addr, err)
	}
	defer conn.Close()
	conn.UDPSize = dns.MaxMsgSize
	if err := conn.WriteMsg(m); err != nil {
		t.Fatalf("write %s: %v", proto, err)
	}
	raw, err := conn.ReadMsgHeader(nil)
	if err != nil {
		t.Fatalf("read %s: %v", proto, err)
	}
	resp := new(dns.Msg)
	if err := resp.Unpack(raw); err != nil {
		t.Fatalf("unpack %s response: %v", proto, err)
	}
	return resp, len(raw)
}

func TestServesUDPAndTCPOnOnePort(t *testing.T) {
	s := startServer(t, records(3))
	for _, proto := range []string{"udp", "tcp"} {
		t.Run("answers over "+proto, func(t *testing.T) {
			resp := dnstest.Exchange(t, proto, s.Addr(), query("big.test.", dns.TypeA, 0))
			if resp.Rcode != dns.RcodeSuccess || len(resp.Answer) != 3 {
				t.Fatalf("got rcode %s with %d answers, want NOERROR with 3", dns.RcodeToString[resp.Rcode], len(resp.Answer))
			}
		})
		t.Run("the Responder sees the client and the transport over "+proto, func(t *testing.T) {
			resp := dnstest.Exchange(t, proto, s.Addr(), query("who.test.", dns.TypeTXT, 0))
			want := proto + " 127.0.0.1"
			if len(resp.Answer) != 1 || resp.Answer[0].(*dns.TXT).Txt[0] != want {
				t.Fatalf("got %v, want one TXT %q", resp.Answer, want)
			}
		})
	}
}

func TestEDNS(t *testing.T) {
	s := startServer(t, records(3))
	t.Run("an EDNS query gets an OPT record advertising the UDP limit", func(t *testing.T) {
		resp := dnstest.Exchange(t, "udp", s.Addr(), query("big.test.", dns.TypeA, 1232))
		opt := resp.IsEdns0()
		if opt == nil || opt.UDPSize() != DefaultMaxUDPSize {
			t.Fatalf("got OPT %v, want one with size %d", opt, DefaultMaxUDPSize)
		}
	})
	t.Run("a query without EDNS gets no OPT record", func(t *testing.T) {
		resp := dnstest.Exchange(t, "udp", s.Addr(), query("big.test.", dns.TypeA, 0))
		if opt := resp.IsEdns0(); opt != nil {
			t.Fatalf("got OPT %v, want none", opt)
		}
	})
	t.Run("an unknown EDNS version gets BADVERS", func(t *testing.T) {
		m := query("big.test.", dns.TypeA, 1232)
		m.IsEdns0().SetVersion(1)
		resp := dnstest.Exchange(t, "udp", s.Addr(), m)
		if resp.Rcode != dns.RcodeBadVers || len(resp.Answer) != 0 {
			t.Fatalf("got rcode %d with %d answers, want BADVERS (16) and none", resp.Rcode, len(resp.Answer))
		}
	})
	t.Run("a Responder returning nil yields SERVFAIL", func(t *testing.T) {
		resp := dnstest.Exchange(t, "udp", s.Addr(), query("nil.test.", dns.TypeA, 0))
		if resp.Rcode != dns.RcodeServerFailure {
			t.Fatalf("got rcode %s, want SERVFAIL", dns.RcodeToString[resp.Rcode])
		}
	})
}

func TestSharedSectionsAreNotWritten(t *testing.T) {
	s := startServer(t, records(1))
	for _, proto := range []string{"udp", "tcp"} {
		resp := dnstest.Exchange(t, proto, s.Addr(), query("cached.test.", dns.TypeA, 1232))
		if len(resp.Extra) != 2 || resp.IsEdns0() == nil {
			t.Fatalf("got extra %v, want the glue and an OPT", resp.Extra)
		}
	}
	for i, rr := range sharedExtra[:cap(sharedExtra)] {
		if _, isOPT := rr.(*dns.OPT); isOPT {
			t.Fatalf("the server wrote an OPT into the shared section at %d", i)
		}
	}
}

func TestTruncation(t *testing.T) {
	s := startServer(t, records(300)) // 300 A records: ~4.9 KB compressed
	tests := []struct {
		name      string
		proto     string
		edns      uint16
		maxSize   int
		truncated bool
	}{
		{"UDP without EDNS is cut to 512 bytes", "udp", 0, 512, true},
		{"UDP with a tiny EDNS size still gets 512 bytes", "udp", 100, 512, true},
		{"UDP with EDNS 1232 is cut to 1232 bytes", "udp", 1232, 1232, true},
		{"UDP with EDNS 65000 is capped at 4096 bytes", "udp", 65000, DefaultMaxUDPSize, true},
		{"TCP carries the whole answer", "tcp", 0, dns.MaxMsgSize, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, size := exchangeSized(t, tc.proto, s.Addr(), query("big.test.", dns.TypeA, tc.edns))
			if size > tc.maxSize || resp.Truncated != tc.truncated {
				t.Fatalf("got %d bytes, TC=%v; want at most %d bytes, TC=%v", size, resp.Truncated, tc.maxSize, tc.truncated)
			}
			if !tc.truncated && len(resp.Answer) != 300 {
				t.Fatalf("got %d answers, want 300", len(resp.Answer))
			}
			if tc.truncated && size < tc.maxSize-100 {
				t.Fatalf("got %d bytes: truncation wasted space below %d", size, tc.maxSize)
			}
		})
	}
	t.Run("the additional section is dropped before the answer", func(t *testing.T) {
		resp := dnstest.Exchange(t, "udp", s.Addr(), query("glue.test.", dns.TypeA, 0))
		if !resp.Truncated || len(resp.Answer) != 10 || len(resp.Extra) >= 300 {
			t.Fatalf("got TC=%v, %d answers, %d extra; want TC, all 10 answers, extras cut", resp.Truncated, len(resp.Answer), len(resp.Extra))
		}
	})
}

func TestLargeTCPAnswer(t *testing.T) {
	s := startServer(t, records(3000)) // ~48 KB compressed, ~81 KB without compression
	resp, size := exchangeSized(t, "tcp", s.Addr(), query("big.test.", dns.TypeA, 0))
	if resp.Truncated || len(resp.Answer) != 3000 {
		t.Fatalf("got TC=%v with %d answers, want the whole 3000", resp.Truncated, len(resp.Answer))
	}
	if uncompressed := resp.Len(); size >= uncompressed {
		t.Fatalf("got %d bytes on the wire, not compressed below %d", size, uncompressed)
	}
}

// rawUDP sends raw bytes, then a valid probe query with id 0xbeef, and
// returns the ids and rcodes of the packets that come back until the
// probe's answer and, if wantID is not the probe's, the answer to the raw
// bytes have arrived. When only the probe is wanted it keeps reading for
// a short grace period, to see that no other answer follows.
func rawUDP(t *testing.T, addr string, raw []byte, wantID uint16) map[uint16]int {
	t.Helper()
	conn, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer conn.Close()
	probe := query("big.test.", dns.TypeA, 0)
	probe.Id = probeID
	packed, _ := probe.Pack()
	for _, b := range [][]byte{raw, packed} {
		if _, err := conn.Write(b); err != nil {
			t.Fatalf("write: %v", err)
		}
	}
	got := map[uint16]int{}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, sawProbe := got[probeID]
		_, sawWanted := got[wantID]
		if sawProbe && sawWanted {
			if wantID != probeID {
				return got
			}
			deadline = time.Now().Add(200 * time.Millisecond)
		}
		conn.SetReadDeadline(deadline)
		buf := make([]byte, dns.MaxMsgSize)
		n, err := conn.Read(buf)
		if err != nil {
			if sawProbe && sawWanted {
				return got
			}
			t.Fatalf("read: %v (got %v so far)", err, got)
		}
		resp := new(dns.Msg)
		if err := resp.Unpack(buf[:n]); err != nil {
			t.Fatalf("unreadable answer %x: %v", buf[:n], err)
		}
		got[resp.Id] = resp.Rcode
	}
}

const probeID = 0xbeef

func header(id uint16, bits uint16, qd, an, ns, ar uint16) []byte {
	var b []byte
	for _, v := range []uint16{id, bits, qd, an, ns, ar} {
		b = append(b, byte(v>>8), byte(v))
	}
	return b
}

func TestMalformedPackets(t *testing.T) {
	s := startServer(t, records(1))
	tests := []struct {
		name    string
		raw     []byte
		rcode   int // -1: no answer expected
		invalid int64
	}{
		{"a packet shorter than a header gets no answer", []byte{1, 2, 3, 4, 5}, -1, 1},
		{"a header with a garbled question gets FORMERR", append(header(0x1234, 0, 1, 0, 0, 0), 0x3f, 'a'), dns.RcodeFormatError, 1},
		{"two questions get FORMERR", header(0x1234, 0, 2, 0, 0, 0), dns.RcodeFormatError, 0},
		{"no question gets FORMERR", header(0x1234, 0, 0, 0, 0, 0), dns.RcodeFormatError, 0},
		{"a question count of one and no question gets FORMERR", header(0x1234, 0, 1, 0, 0, 0), dns.RcodeFormatError, 0},
		{"an UPDATE gets NOTIMP", header(0x1234, dns.OpcodeUpdate<<11, 1, 0, 0, 0), dns.RcodeNotImplemented, 0},
		{"a NOTIFY gets NOTIMP", header(0x1234, dns.OpcodeNotify<<11, 1, 0, 0, 0), dns.RcodeNotImplemented, 0},
		{"a response gets no answer", header(0x1234, 1<<15, 1, 0, 0, 0), -1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := s.invalid.Load()
			wantID := uint16(0x1234)
			if tc.rcode < 0 {
				wantID = probeID
			}
			got := rawUDP(t, s.Addr(), tc.raw, wantID)
			if rcode, ok := got[0x1234]; tc.rcode < 0 && (ok || len(got) != 1) {
				t.Fatalf("got answers %v, want only the probe's", got)
			} else if tc.rcode >= 0 && rcode != tc.rcode {
				t.Fatalf("got rcode %s, want %s", dns.RcodeToString[rcode], dns.RcodeToString[tc.rcode])
			}
			if n := s.invalid.Load() - before; n != tc.invalid {
				t.Fatalf("Invalid called %d times, want %d", n, tc.invalid)
			}
		})
	}
}

func TestShutdownClosesBothTransports(t *testing.T) {
	s, err := Start(Config{Addr: "127.0.0.1:0", Responder: records(1)})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if conn, err := net.Dial("tcp", s.Addr()); err == nil {
		conn.Close()
		t.Fatalf("TCP %s still accepts connections after Shutdown", s.Addr())
	}
	if pc, err := net.ListenPacket("udp", s.Addr()); err != nil {
		t.Fatalf("UDP %s still bound after Shutdown: %v", s.Addr(), err)
	} else {
		pc.Close()
	}
}

func TestStartRejectsABadAddress(t *testing.T) {
	for _, addr := range []string{"127.0.0.1", "256.0.0.1:53", "127.0.0.1:99999"} {
		t.Run(fmt.Sprintf("address %q is an error", addr), func(t *testing.T) {
			s, err := Start(Config{Addr: addr, Responder: records(1)})
			if err == nil {
				s.Shutdown(t.Context())
				t.Fatalf("Start(%q) succeeded, want an error", addr)
			}
		})
	}
}
