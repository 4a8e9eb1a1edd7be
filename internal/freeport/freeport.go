// Package freeport hands tests free ports on 127.0.0.1 for the servers
// they start. It imports nothing beyond the standard library, so a test
// binary that only needs ports stays small.
package freeport

import (
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Port returns a port on 127.0.0.1 that was free for TCP and UDP a
// moment ago. It is drawn at random below the kernel's ephemeral range
// (net.ipv4.ip_local_port_range), which the kernel never hands out for a
// port 0 bind or an outgoing connection: between Port and its use,
// only another test drawing the same port could take it. Where there is
// no room below that range, the kernel picks the port. A port is handed
// out once per process: two servers of one test, neither listening yet,
// never get the same one.
func Port(t testing.TB) int {
	t.Helper()
	low := ephemeralLow()
	for range 100 {
		if low <= minDrawnPort {
			break
		}
		if port := minDrawnPort + rand.IntN(low-minDrawnPort); portFree(port) && handedOut.claim(port) {
			return port
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// handedOut are the ports Port has drawn in this process.
var handedOut = portSet{ports: map[int]bool{}}

// portSet is a set of ports, safe for concurrent use.
type portSet struct {
	mu    sync.Mutex
	ports map[int]bool // guarded by mu
}

// claim adds port, reporting whether it was not in the set yet.
func (s *portSet) claim(port int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ports[port] {
		return false
	}
	s.ports[port] = true
	return true
}

// minDrawnPort is the lowest port Port draws.
const minDrawnPort = 20000

// ephemeralLow is the first port of the kernel's ephemeral range; 0 when
// it cannot be read.
func ephemeralLow() int {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(data))
	if len(fields) == 0 {
		return 0
	}
	low, _ := strconv.Atoi(fields[0])
	return low
}

// portFree reports whether port can be bound on 127.0.0.1 for TCP and UDP.
func portFree(port int) bool {
	addr := HostPort(port)
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	defer l.Close()
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return false
	}
	pc.Close()
	return true
}

// HostPort formats 127.0.0.1:port.
func HostPort(port int) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}
