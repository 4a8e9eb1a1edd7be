package harness

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"
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
	deadline := time.Now().Add(timeout)
	interval := 10 * time.Millisecond
	for {
		err := cond()
		if err == nil {
			return nil
		}
		var p permanentError
		if errors.As(err, &p) {
			return p.err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("condition not met within %v: %w", timeout, err)
		}
		time.Sleep(interval) // the polling interval, not a wait for a condition
		interval = min(2*interval, 250*time.Millisecond)
	}
}

// Permanent wraps err so that Poll and Eventually stop at once and report it,
// for conditions that can no longer become true (a server exited, say).
func Permanent(err error) error {
	return permanentError{err}
}

type permanentError struct{ err error }

func (p permanentError) Error() string { return p.err.Error() }
func (p permanentError) Unwrap() error { return p.err }
