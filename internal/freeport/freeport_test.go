package freeport

import (
	"net"
	"testing"
)

// TestPortIsBelowTheEphemeralRangeAndFree: the port Port returns
// is one the kernel would never hand out on its own, and binds on TCP and
// UDP.
func TestPortIsBelowTheEphemeralRangeAndFree(t *testing.T) {
	low := ephemeralLow()
	if low <= minDrawnPort {
		t.Skipf("the ephemeral range starts at %d, leaving no room above %d: Port lets the kernel pick", low, minDrawnPort)
	}
	for range 20 {
		port := Port(t)
		if port < minDrawnPort || port >= low {
			t.Fatalf("port %d, want it in [%d, %d)", port, minDrawnPort, low)
		}
		l, err := net.Listen("tcp", HostPort(port))
		if err != nil {
			t.Fatalf("binding TCP %d: %v", port, err)
		}
		pc, err := net.ListenPacket("udp", HostPort(port))
		l.Close()
		if err != nil {
			t.Fatalf("binding UDP %d: %v", port, err)
		}
		pc.Close()
	}
}

// TestPortNeverHandsOutAPortTwice: ports drawn while nothing listens
// on them yet (a cluster's members before they start) are all different;
// 500 draws from the ~12,000 ports below the ephemeral range would repeat
// one with near certainty without the record of those handed out.
func TestPortNeverHandsOutAPortTwice(t *testing.T) {
	seen := map[int]bool{}
	for range 500 {
		port := Port(t)
		if seen[port] {
			t.Fatalf("port %d handed out twice", port)
		}
		seen[port] = true
	}
}
