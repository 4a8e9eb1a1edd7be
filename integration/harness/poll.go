package harness

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/kubesky/kubesky/internal/poll"
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago. The
// port is released before returning, so another process may take it; the
// window is small enough for tests.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
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
