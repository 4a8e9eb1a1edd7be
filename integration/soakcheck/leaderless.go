package soakcheck

import (
	"slices"
	"time"
)

// LeaderSample is one look at one kube2sky replica: whether it led at At.
// A replica that did not answer did not lead (it cannot write either).
type LeaderSample struct {
	At      time.Time
	Leading bool
}

// LongestLeaderless returns the longest stretch in which no replica led,
// and when it began, from each replica's samples in the order taken.
// Each replica is taken to keep its state from one sample to its next;
// the stretch before every replica's first sample does not count, and a
// stretch still open at the last sample ends there.
func LongestLeaderless(replicas [][]LeaderSample) (longest time.Duration, began time.Time) {
	type event struct {
		LeaderSample
		replica int
	}
	var events []event
	for i, samples := range replicas {
		for _, s := range samples {
			events = append(events, event{s, i})
		}
	}
	slices.SortStableFunc(events, func(a, b event) int { return a.At.Compare(b.At) })
	leading := make([]bool, len(replicas))
	seen := make([]bool, len(replicas))
	var since time.Time // when the current leaderless stretch began; zero while one leads
	for _, e := range events {
		leading[e.replica], seen[e.replica] = e.Leading, true
		switch {
		case slices.Contains(leading, true):
			if !since.IsZero() && e.At.Sub(since) > longest {
				longest, began = e.At.Sub(since), since
			}
			since = time.Time{}
		case since.IsZero() && !slices.Contains(seen, false):
			since = e.At
		}
	}
	if n := len(events); n > 0 && !since.IsZero() && events[n-1].At.Sub(since) > longest {
		longest, began = events[n-1].At.Sub(since), since
	}
	return longest, began
}
