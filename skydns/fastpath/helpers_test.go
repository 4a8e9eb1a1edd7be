package fastpath

import (
	"net/netip"
	"strconv"
	"sync"
	"testing"

	"github.com/miekg/dns"
)

// fakeAnswers is a Source serving "n.<i>.test." names with i A records
// (i up to 300), NXDOMAIN for other names under "test.", and nothing (the
// ordinary path) elsewhere. It counts the answers it computes.
type fakeAnswers struct {
	mu       sync.Mutex
	version  uint64
	computed int
	ttl      uint32
}

const fakeMaxUDPSize = 4096

func (f *fakeAnswers) Version() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.version
}

func (f *fakeAnswers) bump(ttl uint32) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.version++
	f.ttl = ttl
}

func (f *fakeAnswers) Fill(name string, qtype uint16) (Answer, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.computed++
	if !dns.IsSubDomain("test.", name) {
		return Answer{Version: f.version}, false
	}
	req := new(dns.Msg)
	req.Question = []dns.Question{{Name: name, Qtype: qtype, Qclass: dns.ClassINET}}
	resp := fakeResponse(req, f.ttl)
	resp.SetEdns0(fakeMaxUDPSize, false)
	resp.Truncate(fakeMaxUDPSize)
	resp.Compress = true
	wire, err := resp.Pack()
	return Answer{Wire: wire, Version: f.version, Zone: "test.", Volatile: true}, err == nil
}

// fakeResponse is what fakeAnswers answers req with, before EDNS.
func fakeResponse(req *dns.Msg, ttl uint32) *dns.Msg {
	resp := new(dns.Msg).SetReply(req)
	resp.Authoritative = true
	n, ok := countIn(req.Question[0].Name)
	if !ok || req.Question[0].Qtype != dns.TypeA {
		resp.Rcode = dns.RcodeNameError
		return resp
	}
	for i := range n {
		ip := netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)})
		resp.Answer = append(resp.Answer, &dns.A{Hdr: dns.RR_Header{Name: req.Question[0].Name, Rrtype: dns.TypeA,
			Class: dns.ClassINET, Ttl: ttl}, A: ip.AsSlice()})
	}
	return resp
}

// countIn reads i from "n.<i>.test." (any case).
func countIn(name string) (int, bool) {
	labels := dns.SplitDomainName(name)
	if len(labels) != 3 || (labels[0] != "n" && labels[0] != "N") {
		return 0, false
	}
	n, err := strconv.Atoi(labels[1])
	return n, err == nil
}

// unpack parses a response, failing the test if it does not parse.
func unpack(t testing.TB, b []byte) *dns.Msg {
	t.Helper()
	m := new(dns.Msg)
	if err := m.Unpack(b); err != nil {
		t.Fatalf("unpacking %x: %v", b, err)
	}
	return m
}
