package fastpath

import (
	"encoding/binary"
	"testing"

	"github.com/miekg/dns"
)

func TestSOASerialAt(t *testing.T) {
	soa := &dns.SOA{Hdr: dns.RR_Header{Name: "test.", Rrtype: dns.TypeSOA, Class: dns.ClassINET}, Ns: "ns.dns.test.",
		Mbox: "hostmaster.test.", Serial: 0xdeadbeef}
	a := &dns.A{Hdr: dns.RR_Header{Name: "a.test.", Rrtype: dns.TypeA, Class: dns.ClassINET}, A: []byte{1, 2, 3, 4}}
	ns := &dns.NS{Hdr: dns.RR_Header{Name: "test.", Rrtype: dns.TypeNS, Class: dns.ClassINET}, Ns: "ns.test."}
	pack := func(answer, authority []dns.RR) []byte {
		m := new(dns.Msg).SetQuestion("a.test.", dns.TypeA)
		m.Answer, m.Ns, m.Compress = answer, authority, true
		b, err := m.Pack()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		name  string
		msg   []byte
		found bool
	}{
		{"an SOA alone in the authority section", pack(nil, []dns.RR{soa}), true},
		{"an SOA after answers and an NS", pack([]dns.RR{a, a}, []dns.RR{ns, soa}), true},
		{"an SOA in the answer section does not count", pack([]dns.RR{soa}, nil), false},
		{"no SOA", pack([]dns.RR{a}, []dns.RR{ns}), false},
		{"a message cut in the SOA", pack(nil, []dns.RR{soa})[:40], false},
		{"a header alone", pack(nil, nil)[:12], false},
		{"less than a header", []byte{1, 2}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			at := soaSerialAt(tc.msg)
			if !tc.found {
				if at != 0 {
					t.Fatalf("found a serial at %d", at)
				}
				return
			}
			if at == 0 || binary.BigEndian.Uint32(tc.msg[at:]) != 0xdeadbeef {
				t.Fatalf("serial at %d does not hold it", at)
			}
		})
	}
}
