package transfer

import (
	"testing"

	"github.com/miekg/dns"
)

func TestAnIXFRSerialIsCurrentInSerialArithmetic(t *testing.T) {
	tests := []struct {
		name           string
		client, server uint32
		hasSOA         bool
		want           bool
	}{
		{"the same serial is current", 42, 42, true, true},
		{"an older serial is not", 41, 42, true, false},
		{"a newer serial is current (the server started over)", 43, 42, true, true},
		{"a serial from before the wrap is older than one after it", 0xfffffff0, 5, true, false},
		{"a serial after the wrap is newer than one before it", 5, 0xfffffff0, true, true},
		{"a serial half the space behind is older", 1, 1 + 1<<31, true, false},
		{"a request without an SOA is not current", 42, 42, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := new(dns.Msg).SetQuestion("cluster.local.", dns.TypeIXFR)
			if tc.hasSOA {
				req.SetIxfr("cluster.local.", tc.client, "ns.", "hostmaster.")
			}
			if got := current(req, tc.server); got != tc.want {
				t.Fatalf("current(client %d, server %d) = %v, want %v", tc.client, tc.server, got, tc.want)
			}
		})
	}
}
