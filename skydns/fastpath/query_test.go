package fastpath

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/miekg/dns"
)

// packQuery packs a query for name and qtype, with an OPT record of the
// given size when edns > 0, after letting edit change the message.
func packQuery(t testing.TB, name string, qtype uint16, edns uint16, edit func(*dns.Msg)) []byte {
	t.Helper()
	m := new(dns.Msg).SetQuestion(name, qtype)
	m.Id = 0x1234
	if edns > 0 {
		m.SetEdns0(edns, false)
	}
	if edit != nil {
		edit(m)
	}
	b, err := m.Pack()
	if err != nil {
		t.Fatalf("packing the query: %v", err)
	}
	return b
}

func TestParseQueryAcceptsPlainQueries(t *testing.T) {
	tests := []struct {
		name    string
		pkt     []byte
		key     string
		edns    bool
		udpSize uint16
	}{
		{"a query without EDNS", packQuery(t, "web.default.svc.cluster.local.", dns.TypeA, 0, nil),
			"\x03web\x07default\x03svc\x07cluster\x05local\x00\x00\x01", false, 0},
		{"a query with a plain OPT record", packQuery(t, "web.cluster.local.", dns.TypeAAAA, 1232, nil),
			"\x03web\x07cluster\x05local\x00\x00\x1c", true, 1232},
		{"a mixed-case name is keyed in lower case", packQuery(t, "WeB.CLUSTER.local.", dns.TypeSRV, 0, nil),
			"\x03web\x07cluster\x05local\x00\x00\x21", false, 0},
		{"digits, '-', '_' and '*' are plain", packQuery(t, "_http._tcp.*.a-1.local.", dns.TypeSRV, 0, nil),
			"\x05_http\x04_tcp\x01*\x03a-1\x05local\x00\x00\x21", false, 0},
		{"the root name is plain", packQuery(t, ".", dns.TypeNS, 0, nil), "\x00\x00\x02", false, 0},
		{"an EDNS size of 0 is kept", packQuery(t, "a.local.", dns.TypeA, 0, func(m *dns.Msg) {
			m.Extra = []dns.RR{&dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}}}
		}), "\x01a\x05local\x00\x00\x01", true, 0},
		{"the RD, CD, AD and TC bits do not matter", packQuery(t, "a.local.", dns.TypeA, 0, func(m *dns.Msg) {
			m.RecursionDesired, m.CheckingDisabled, m.AuthenticatedData, m.Truncated = true, true, true, true
		}), "\x01a\x05local\x00\x00\x01", false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, key, ok := parseQuery(tc.pkt, nil)
			if !ok {
				t.Fatalf("parseQuery(%x) rejected a plain query", tc.pkt)
			}
			if string(key) != tc.key || q.edns != tc.edns || q.udpSize != tc.udpSize {
				t.Fatalf("got key %q edns %v size %d, want %q %v %d", key, q.edns, q.udpSize, tc.key, tc.edns, tc.udpSize)
			}
			if nameEnd := headerLen + len(tc.key) - 2; q.nameEnd != nameEnd {
				t.Fatalf("nameEnd %d, want %d", q.nameEnd, nameEnd)
			}
		})
	}
}

func TestParseQueryRejectsWhatIsNotPlain(t *testing.T) {
	plain := packQuery(t, "web.cluster.local.", dns.TypeA, 0, nil)
	edit := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(plain)) }
	setOPT := func(opt *dns.OPT) []byte {
		return packQuery(t, "web.cluster.local.", dns.TypeA, 0, func(m *dns.Msg) { m.Extra = []dns.RR{opt} })
	}
	optHdr := dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT, Class: 1232}
	nsid := &dns.OPT{Hdr: optHdr, Option: []dns.EDNS0{&dns.EDNS0_NSID{Code: dns.EDNS0NSID}}}
	doAndZ := &dns.OPT{Hdr: optHdr}
	doAndZ.SetDo()
	doAndZ.SetZ(1)
	v1 := &dns.OPT{Hdr: optHdr}
	v1.SetVersion(1)
	tests := []struct {
		name string
		pkt  []byte
	}{
		{"a response", edit(func(b []byte) []byte { b[2] |= 0x80; return b })},
		{"a NOTIFY", edit(func(b []byte) []byte { b[2] |= dns.OpcodeNotify << 3; return b })},
		{"an IQUERY", edit(func(b []byte) []byte { b[2] |= 1 << 3; return b })},
		{"two questions", packQuery(t, "a.local.", dns.TypeA, 0, func(m *dns.Msg) {
			m.Question = append(m.Question, dns.Question{Name: "b.local.", Qtype: dns.TypeA, Qclass: dns.ClassINET})
		})},
		{"no question", edit(func(b []byte) []byte { b[5] = 0; return b[:headerLen] })},
		{"an AXFR", packQuery(t, "cluster.local.", dns.TypeAXFR, 0, nil)},
		{"an IXFR", packQuery(t, "cluster.local.", dns.TypeIXFR, 0, nil)},
		{"an answer record", packQuery(t, "a.local.", dns.TypeA, 0, func(m *dns.Msg) {
			m.Answer = []dns.RR{&dns.A{Hdr: dns.RR_Header{Name: "a.local.", Rrtype: dns.TypeA, Class: dns.ClassINET}, A: []byte{1, 2, 3, 4}}}
		})},
		{"an authority record", packQuery(t, "a.local.", dns.TypeA, 0, func(m *dns.Msg) {
			m.Ns = []dns.RR{&dns.NS{Hdr: dns.RR_Header{Name: "local.", Rrtype: dns.TypeNS, Class: dns.ClassINET}, Ns: "ns.local."}}
		})},
		{"two OPT records", packQuery(t, "a.local.", dns.TypeA, 1232, func(m *dns.Msg) { m.Extra = append(m.Extra, m.Extra[0]) })},
		{"an additional record that is not OPT", packQuery(t, "a.local.", dns.TypeA, 0, func(m *dns.Msg) {
			m.Extra = []dns.RR{&dns.A{Hdr: dns.RR_Header{Name: "a.local.", Rrtype: dns.TypeA, Class: dns.ClassINET}, A: []byte{1, 2, 3, 4}}}
		})},
		{"the DO bit with another flag", setOPT(doAndZ)},
		{"EDNS version 1", setOPT(v1)},
		{"an EDNS option", setOPT(nsid)},
		{"an OPT record not owned by the root", setOPT(&dns.OPT{Hdr: dns.RR_Header{Name: "a.", Rrtype: dns.TypeOPT, Class: 1232}})},
		{"class CHAOS", packQuery(t, "version.bind.", dns.TypeTXT, 0, func(m *dns.Msg) { m.Question[0].Qclass = dns.ClassCHAOS })},
		{"a byte after the question", edit(func(b []byte) []byte { return append(b, 0) })},
		{"a packet cut in the question's type", edit(func(b []byte) []byte { return b[:len(b)-3] })},
		{"a packet cut in the name", edit(func(b []byte) []byte { return b[:headerLen+3] })},
		{"a header alone", edit(func(b []byte) []byte { return b[:headerLen] })},
		{"a name with a space", packQuery(t, `a\ b.local.`, dns.TypeA, 0, nil)},
		{"a name with a dot inside a label", packQuery(t, `a\.b.local.`, dns.TypeA, 0, nil)},
		{"a name with a byte above 127", packQuery(t, `\200.local.`, dns.TypeA, 0, nil)},
		{"a compressed name", edit(func(b []byte) []byte {
			return append(b[:headerLen], 0xc0, headerLen, 0, 1, 0, 1)
		})},
		{"a label longer than 63 bytes", edit(func(b []byte) []byte {
			return append(append(b[:headerLen], 64), append(bytes.Repeat([]byte("a"), 64), 0, 0, 1, 0, 1)...)
		})},
		{"a name longer than 255 bytes", edit(func(b []byte) []byte {
			b = b[:headerLen]
			for range 5 {
				b = append(append(b, 63), bytes.Repeat([]byte("a"), 63)...)
			}
			return append(b, 0, 0, 1, 0, 1)
		})},
	}
	for _, tc := range tests {
		t.Run(tc.name+" is not plain", func(t *testing.T) {
			if _, _, ok := parseQuery(tc.pkt, nil); ok {
				t.Fatalf("parseQuery(%x) accepted it", tc.pkt)
			}
		})
	}
}

func TestAQueryWithTheDOBitIsPlainWithAKeyOfItsOwn(t *testing.T) {
	pkt := packQuery(t, "Web.cluster.local.", dns.TypeA, 1232, func(m *dns.Msg) { m.IsEdns0().SetDo() })
	q, key, ok := parseQuery(pkt, nil)
	if !ok || !q.do || !q.edns || q.udpSize != 1232 || string(key) != "\x03web\x07cluster\x05local\x00\x00\x01\xff" {
		t.Fatalf("parseQuery: ok %v, do %v, edns %v, size %d, key %q", ok, q.do, q.edns, q.udpSize, key)
	}
	if q.nameEnd != headerLen+len("\x03web\x07cluster\x05local\x00") {
		t.Fatalf("nameEnd %d", q.nameEnd)
	}
}

func TestPresentationNameIsTheLowerCaseText(t *testing.T) {
	for _, name := range []string{".", "local.", "_http._tcp.web.default.svc.cluster.local.", "*.a-1.local."} {
		pkt := packQuery(t, name, dns.TypeA, 0, nil)
		_, key, ok := parseQuery(pkt, nil)
		if !ok {
			t.Fatalf("%s not plain", name)
		}
		if got := presentationName(key[:len(key)-2]); got != name {
			t.Errorf("presentationName = %q, want %q", got, name)
		}
	}
}

func TestParseQueryReadsTheType(t *testing.T) {
	pkt := packQuery(t, "a.local.", 0xfff0, 0, nil)
	q, key, ok := parseQuery(pkt, nil)
	if !ok || q.qtype != 0xfff0 || binary.BigEndian.Uint16(key[len(key)-2:]) != 0xfff0 {
		t.Fatalf("got %v qtype %#x key %x", ok, q.qtype, key)
	}
}

func TestLowerInPlaceRejectsExactlyTheBytesOutsideTheTable(t *testing.T) {
	for c := range 256 {
		label := []byte{'a', byte(c), 'Z'}
		ok := lowerInPlace(label)
		if want := lowerTable[c] != 0; ok != want {
			t.Errorf("byte %#x: ok %v, want %v", c, ok, want)
		}
		if ok && (label[0] != 'a' || label[1] != lowerTable[c] || label[2] != 'z') {
			t.Errorf("byte %#x: lowered to %q", c, label)
		}
	}
}
