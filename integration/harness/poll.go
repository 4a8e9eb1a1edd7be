package harness

import (
	"context"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubesky/kubesky/internal/poll"
)

// FreePort returns a port on 127.0.0.1 that was free for TCP and UDP a
// moment ago. It is drawn at random below the kernel's ephemeral range
// (net.ipv4.ip_local_port_range), which the kernel never hands out for a
// port 0 bind or an outgoing connection: between FreePort and its use,
// only another test drawing the same port could take it. Where there is
// no room below that range, the kernel picks the port. A port is handed
// out once per process: two servers of one test, neither listening yet,
// never get the same one.
func FreePort(t testing.TB) int {
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

// handedOut are the ports FreePort has drawn in this process.
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

// minDrawnPort is the lowest port FreePort draws.
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

// Eventually polls cond until it returns nil, and fails the test with cond's
// last error when timeout passes first.
func Eventually(t testing.TB, timeout time.Duration, cond func() error) {
	t.Helper()
	if err := Poll(timeout, cond); err != nil {
		t.Fatal(err)
	}
}

// Poll calls cond until it returns nil and returns nil, or returns an error
// holding cond's last error once timeout has passed or cond returned an error
// wrapped with Permanent. The interval between calls starts at 10ms and
// doubles up to 250ms.
func Poll(timeout time.Duration, cond func() error) error {
	return poll.Between(context.Background(), timeout, 10*time.Millisecond, 250*time.Millisecond,
		func(context.Context) error { return cond() })
}

// Permanent wraps err so that Poll and Eventually stop at once and report it,
// for conditions that can no longer become true (a server exited, say).
func Permanent(err error) error { return poll.Permanent(err) }
