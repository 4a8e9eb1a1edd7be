package etcdstore

import (
	"context"
	"testing"
	"time"
)

func TestBackoffDoublesUpToItsMaximumAndResets(t *testing.T) {
	b := NewBackoff(time.Second, 3*time.Second)
	woken := make(chan struct{})
	close(woken)
	var delays []time.Duration
	for range 4 {
		delays = append(delays, b.next)
		if !b.WaitOr(context.Background(), woken) {
			t.Fatal("WaitOr with a closed wake channel returned false")
		}
	}
	want := []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 3 * time.Second}
	for i := range want {
		if delays[i] != want[i] {
			t.Fatalf("delays %v, want %v", delays, want)
		}
	}
	b.Reset()
	if b.next != time.Second {
		t.Fatalf("after Reset the delay is %v, want 1s", b.next)
	}
}

func TestBackoffWaitEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if NewBackoff(time.Hour, time.Hour).Wait(ctx) {
		t.Fatal("Wait on an ended context returned true")
	}
}
