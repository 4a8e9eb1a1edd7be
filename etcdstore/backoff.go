package etcdstore

import (
	"context"
	"time"
)

// Backoff is the retry delay of a loop that reaches etcd: it doubles after
// each wait, up to a maximum, and Reset starts it over.
type Backoff struct {
	min, max, next time.Duration
}

// NewBackoff returns a Backoff that starts at min and stops growing at max.
func NewBackoff(min, max time.Duration) *Backoff { return &Backoff{min: min, max: max, next: min} }

// Wait sleeps for the current delay; it returns false if ctx ended first.
func (b *Backoff) Wait(ctx context.Context) bool { return b.WaitOr(ctx, nil) }

// WaitOr is Wait that also ends, returning true, when wake is closed.
func (b *Backoff) WaitOr(ctx context.Context, wake <-chan struct{}) bool {
	t := time.NewTimer(b.next)
	defer t.Stop()
	b.next = min(2*b.next, b.max)
	select {
	case <-t.C:
	case <-wake:
	case <-ctx.Done():
		return false
	}
	return true
}

// Reset makes the next wait the shortest again.
func (b *Backoff) Reset() { b.next = b.min }
