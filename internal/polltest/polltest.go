// Package polltest is the tests' wait for a condition: it checks every
// Interval (or an interval of the test's choosing) until a deadline
// (package poll) and fails the test with the condition's last reason, so
// that no test sleeps for a fixed time.
package polltest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kubesky/kubesky/internal/poll"
)

// Timeout is the deadline of Eventually, True and NoComplaint; Interval is
// the time between two checks.
const (
	Timeout  = 15 * time.Second
	Interval = 5 * time.Millisecond
)

// Eventually checks cond until it returns nil, and fails tb with what and
// cond's last error if Timeout passes first.
func Eventually(tb testing.TB, what string, cond func() error) {
	tb.Helper()
	Within(tb, Timeout, what, cond)
}

// Within is Eventually with its own deadline.
func Within(tb testing.TB, timeout time.Duration, what string, cond func() error) {
	tb.Helper()
	Every(tb, timeout, Interval, what, cond)
}

// Every is Within with its own interval between two checks, for a
// condition that costs more than Interval can pay for, such as a request
// to a cluster's API server.
func Every(tb testing.TB, timeout, interval time.Duration, what string, cond func() error) {
	tb.Helper()
	err := poll.Every(context.Background(), timeout, interval, func(context.Context) error { return cond() })
	if err != nil {
		tb.Fatalf("%s: %v", what, err)
	}
}

// True is Eventually for a condition that gives no reason.
func True(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	Eventually(tb, what, func() error {
		if cond() {
			return nil
		}
		return errStillFalse
	})
}

// NoComplaint is Eventually for a condition that describes what is still
// wrong, or returns "" once nothing is.
func NoComplaint(tb testing.TB, what string, cond func() string) {
	tb.Helper()
	Eventually(tb, what, func() error {
		if complaint := cond(); complaint != "" {
			return errors.New(complaint)
		}
		return nil
	})
}

var errStillFalse = errors.New("still false")
