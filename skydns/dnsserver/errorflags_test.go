package dnsserver

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/skydns/fastpath"
)

// fastTXT is a fast path that answers every name with one TXT record
// "fast": an answer that says the fast path, not the Responder, wrote it.
type fastTXT struct{}

func (fastTXT) Version() uint64 { return 1 }

func (fastTXT) Fill(name string, qtype uint16) (fastpath.Answer, bool) {
	resp := new(dns.Msg).SetQuestion(name, qtype)
	resp.Response, resp.RecursionDesired = true, false
	resp.Id = 0
	resp.Answer = []dns.RR{&dns.TXT{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 30}, Txt: []string{"fast"}}}
	resp.SetEdns0(DefaultMaxUDPSize, false)
	wire, err := resp.Pack()
	return fastpath.Answer{Wire: wire, Version: 1, Zone: "test."}, err == nil
}

// paths are the three ways a query reaches the server: UDP with and
// without the fast path in front, and TCP (behind the fast path).
var paths = []struct {
	name  string
	proto string
	fast  bool
}{{"udp", "udp", false}, {"udp fast path", "udp", true}, {"tcp", "tcp", true}}

// startPath starts a server for path p, where recursion is available to
// 127.0.0.1 when recursion is set.
func startPath(t *testing.T, fast, recursion bool) *testServer {
	t.Helper()
	cfg := Config{Responder: records(1)}
	if fast {
		cfg.FastPath = fastTXT{}
	}
	if recursion {
		cfg.RecursionAvailable = func(client netip.Addr) bool { return client == netip.MustParseAddr("127.0.0.1") }
	}
	return startServerWith(t, cfg)
}

// exchangeRaw sends raw, exactly as given, over proto and returns the
// answer.
func exchangeRaw(t *testing.T, proto, addr string, raw []byte) *dns.Msg {
	t.Helper()
	conn, err := net.DialTimeout(proto, addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", proto, err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	out, in := raw, make([]byte, dns.MaxMsgSize)
	if proto == "tcp" {
		out = binary.BigEndian.AppendUint16(nil, uint16(len(raw)))
		out = append(out, raw...)
	}
	if _, err := conn.Write(out); err != nil {
		t.Fatalf("write %s: %v", proto, err)
	}
	n, err := readAnswer(conn, proto, in)
	if err != nil {
		t.Fatalf("read %s: %v", proto, err)
	}
	resp := new(dns.Msg)
	if err := resp.Unpack(in[:n]); err != nil {
		t.Fatalf("unpack %x: %v", in[:n], err)
	}
	return resp
}

// readAnswer reads one message from conn into buf: one datagram, or one
// length-prefixed TCP message.
func readAnswer(conn net.Conn, proto string, buf []byte) (int, error) {
	if proto != "tcp" {
		return conn.Read(buf)
	}
	if _, err := io.ReadFull(conn, buf[:2]); err != nil {
		return 0, err
	}
	n := int(binary.BigEndian.Uint16(buf))
	_, err := io.ReadFull(conn, buf[:n])
	return n, err
}

// everyFlag is every header flag a query may set: TC, RA, Z, AD, RD, CD.
const everyFlag = 1<<9 | 1<<8 | 1<<7 | 1<<6 | 1<<5 | 1<<4

// withQuestion appends a question for a.test. A to a header.
func withQuestion(h []byte) []byte {
	return append(h, 1, 'a', 4, 't', 'e', 's', 't', 0, 0, 1, 0, 1)
}

func TestAnErrorAnswerCarriesNoneOfTheQuerysTCRAOrADBits(t *testing.T) {
	queries := []struct {
		name  string
		raw   []byte
		rcode int
	}{
		{"an unknown opcode gets NOTIMP", withQuestion(header(0x1234, 3<<11|everyFlag, 1, 0, 0, 0)), dns.RcodeNotImplemented},
		{"an UPDATE gets NOTIMP", withQuestion(header(0x1234, dns.OpcodeUpdate<<11|everyFlag, 1, 0, 0, 0)), dns.RcodeNotImplemented},
		{"a query without a question gets FORMERR", header(0x1234, everyFlag, 0, 0, 0, 0), dns.RcodeFormatError},
		{"a question count of one and no question gets FORMERR", header(0x1234, everyFlag, 1, 0, 0, 0), dns.RcodeFormatError},
		{"a garbled question gets FORMERR", append(header(0x1234, everyFlag, 1, 0, 0, 0), 0x3f, 'a'), dns.RcodeFormatError},
		{"two questions get FORMERR", header(0x1234, everyFlag, 2, 0, 0, 0), dns.RcodeFormatError},
	}
	for _, p := range paths {
		for _, recursion := range []bool{false, true} {
			s := startPath(t, p.fast, recursion)
			for _, q := range queries {
				t.Run(fmt.Sprintf("%s/recursion available %v/%s", p.name, recursion, q.name), func(t *testing.T) {
					resp := exchangeRaw(t, p.proto, s.Addr(), q.raw)
					if resp.Id != 0x1234 || resp.Rcode != q.rcode || !resp.Response {
						t.Fatalf("got ID %#x rcode %s qr %v, want 0x1234 %s qr", resp.Id, dns.RcodeToString[resp.Rcode], resp.Response, dns.RcodeToString[q.rcode])
					}
					if resp.Truncated || resp.AuthenticatedData || resp.Zero || resp.Authoritative {
						t.Errorf("flags tc %v ad %v z %v aa %v, want none", resp.Truncated, resp.AuthenticatedData, resp.Zero, resp.Authoritative)
					}
					if resp.RecursionAvailable != recursion {
						t.Errorf("ra %v, want %v (recursion available to the client)", resp.RecursionAvailable, recursion)
					}
				})
			}
		}
	}
}

// signedQuery is a query for a.test. A signed with TSIG under a key the
// server does not hold.
func signedQuery(t *testing.T, edns bool) []byte {
	t.Helper()
	m := query("a.test.", dns.TypeA, 0)
	m.Id = 0x4321
	if edns {
		m.SetEdns0(1232, false)
	}
	m.SetTsig("unknown.key.", dns.HmacSHA256, 300, time.Now().Unix())
	wire, _, err := dns.TsigGenerate(m, "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0", "", false)
	if err != nil {
		t.Fatalf("signing: %v", err)
	}
	return wire
}

func TestAQuerySignedWithAnUnknownKeyGetsNotauthAndBadkey(t *testing.T) {
	for _, p := range paths {
		s := startPath(t, p.fast, true)
		if p.fast {
			plain, _ := query("a.test.", dns.TypeA, 0).Pack()
			if resp := exchangeRaw(t, p.proto, s.Addr(), plain); len(resp.Answer) != 1 || resp.Answer[0].(*dns.TXT).Txt[0] != "fast" {
				t.Fatalf("%s: the unsigned query got %v, want the fast path's answer", p.name, resp.Answer)
			}
		}
		for _, edns := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/edns %v", p.name, edns), func(t *testing.T) {
				resp := exchangeRaw(t, p.proto, s.Addr(), signedQuery(t, edns))
				if resp.Id != 0x4321 || resp.Rcode != dns.RcodeNotAuth || len(resp.Answer) != 0 {
					t.Fatalf("got ID %#x rcode %s answer %v, want 0x4321 NOTAUTH and no answer", resp.Id, dns.RcodeToString[resp.Rcode], resp.Answer)
				}
				if (resp.IsEdns0() != nil) != edns {
					t.Errorf("OPT record %v, want one only when the query had one", resp.IsEdns0())
				}
				sig := resp.IsTsig()
				if sig == nil {
					t.Fatalf("no TSIG record last in %v", resp.Extra)
				}
				if sig.Error != dns.RcodeBadKey || sig.MACSize != 0 || sig.MAC != "" || sig.Hdr.Name != "unknown.key." || sig.Algorithm != dns.HmacSHA256 || sig.OrigId != 0x4321 {
					t.Errorf("TSIG %v, want BADKEY, no MAC, the query's key name, algorithm and ID", sig)
				}
			})
		}
	}
}
