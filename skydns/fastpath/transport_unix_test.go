//go:build unix

package fastpath

import (
	"net"
	"testing"
)

func TestUDPTransportTellsTheFamilyOfTheSender(t *testing.T) {
	for _, c := range []struct {
		addr net.Addr
		want Transport
	}{
		{&net.UDPAddr{IP: net.IPv4(10, 0, 0, 1).To4(), Port: 53}, UDP4},
		{&net.UDPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 53}, UDP4}, // IPv4-mapped, 16 bytes
		{&net.UDPAddr{IP: net.ParseIP("fd00::1"), Port: 53}, UDP6},
		{nil, UDP4},
	} {
		if got := udpTransport(c.addr); got != c.want {
			t.Errorf("udpTransport(%v) = %s/%s, want %s/%s", c.addr, got.Proto(), got.Family(), c.want.Proto(), c.want.Family())
		}
	}
}
