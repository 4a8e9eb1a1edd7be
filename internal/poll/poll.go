// Package poll waits for a condition with a deadline: the one polling loop
// of the daemons' tools (the demo, the cluster) and, through polltest, of
// the tests.
package poll

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// First and Max bound the interval between two checks: it starts at First
// and doubles up to Max.
const (
	First = 50 * time.Millisecond
	Max   = time.Second
)

// Until calls cond until it returns nil, ctx ends, timeout passes, or cond
// returns an error made by Permanent. A timeout's error carries cond's last
// error.
func Until(ctx context.Context, timeout time.Duration, cond func(context.Context) error) error {
	return until(ctx, timeout, First, Max, cond)
}

// Between is Until with the interval starting at first and doubling up to
// most.
func Between(ctx context.Context, timeout, first, most time.Duration, cond func(context.Context) error) error {
	return until(ctx, timeout, first, most, cond)
}

// Every is Until with a fixed interval between two checks.
func Every(ctx context.Context, timeout, interval time.Duration, cond func(context.Context) error) error {
	return until(ctx, timeout, interval, interval, cond)
}

func until(ctx context.Context, timeout, interval, maxInterval time.Duration, cond func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		err := cond(ctx)
		if err == nil {
			return nil
		}
		var p permanentError
		if errors.As(err, &p) {
			return p.err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not done after %s: %w", timeout, err)
		case <-time.After(interval):
		}
		interval = min(2*interval, maxInterval)
	}
}

// Permanent wraps err so that Until returns it at once: the condition can
// no longer become true.
func Permanent(err error) error { return permanentError{err} }

type permanentError struct{ err error }

func (p permanentError) Error() string { return p.err.Error() }

func (p permanentError) Unwrap() error { return p.err }
