package soakcheck

import (
	"testing"
	"time"
)

func TestLongestLeaderless(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int, leading bool) LeaderSample {
		return LeaderSample{At: t0.Add(time.Duration(ms) * time.Millisecond), Leading: leading}
	}
	tests := []struct {
		name     string
		replicas [][]LeaderSample
		want     time.Duration
		began    int // ms
	}{
		{"always a leader", [][]LeaderSample{{at(0, true), at(100, true)}, {at(50, false), at(150, false)}}, 0, 0},
		{"a handover counts from the leader's loss to the standby's lead",
			[][]LeaderSample{{at(0, true), at(100, false), at(200, false)}, {at(50, false), at(150, false), at(350, true)}}, 250 * time.Millisecond, 100},
		{"the longest of two stretches",
			[][]LeaderSample{{at(0, true), at(100, false), at(200, true), at(300, false), at(900, true)}, {at(10, false)}}, 600 * time.Millisecond, 300},
		{"a stretch open at the end ends at the last sample",
			[][]LeaderSample{{at(0, true), at(100, false)}, {at(50, false), at(400, false)}}, 300 * time.Millisecond, 100},
		{"nothing counts before every replica was seen",
			[][]LeaderSample{{at(0, false), at(500, true)}, {at(400, false)}}, 100 * time.Millisecond, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, began := LongestLeaderless(tt.replicas)
			if got != tt.want {
				t.Fatalf("longest %v, want %v", got, tt.want)
			}
			if tt.want > 0 && !began.Equal(t0.Add(time.Duration(tt.began)*time.Millisecond)) {
				t.Fatalf("began at %v, want +%dms", began.Sub(t0), tt.began)
			}
		})
	}
}
