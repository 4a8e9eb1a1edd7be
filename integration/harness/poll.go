package harness

import (
	"context"
	"testing"
	"time"

	"github.com/kubesky/kubesky/internal/freeport"
	"github.com/kubesky/kubesky/internal/poll"
)

// FreePort returns a port on 127.0.0.1 that was free for TCP and UDP a
// moment ago, never the same one twice in a process (see package freeport,
// which the unit tests use without this package's Kubernetes clients).
var FreePort = freeport.Port

// HostPort formats 127.0.0.1:port.
var HostPort = freeport.HostPort

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
