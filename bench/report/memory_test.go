package report

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestMemoryTableRelatesRSSToTheBudgetAndToCoreDNS(t *testing.T) {
	table := MemoryTable([]MemorySize{
		{Services: 0, RSS: 20 << 20},
		{Services: 10000, Keys: 20000, RawBytes: 2 << 20, RSS: 26 << 20, Peak: 27 << 20, HeapInuse: 4 << 20,
			CoreDNSRSS: 52 << 20, Sync: 123 * time.Millisecond, ListPublish: 45 * time.Millisecond},
	})
	line := lineOf(t, table, "| 10000 |")
	// 26 ÷ (2×2 + 20) = 1.08; 26 ÷ 52 = 0.5.
	for _, want := range []string{"| 2.0 |", "123ms", "| 45ms |", "26.0 (27.0)", "| 1.08 |", "| 52.0 | 0.50× |"} {
		if !strings.Contains(line, want) {
			t.Errorf("memory line lacks %q:\n%s", want, line)
		}
	}
	if !strings.Contains(table, "Base (RSS with no services, after the same queries): 20.0 MB.") {
		t.Errorf("table does not state the base:\n%s", table)
	}
}

func TestMemoryTableWithoutABaseLeavesTheBudgetOpen(t *testing.T) {
	table := MemoryTable([]MemorySize{{Services: 10000, RawBytes: 2 << 20, RSS: 26 << 20}})
	if line := lineOf(t, table, "| 10000 |"); strings.Count(line, "| — |") < 3 || strings.Contains(table, "Base") {
		t.Errorf("want dashes for the budget, CoreDNS and the ratio, and no base line:\n%s", table)
	}
}

func TestBurstTableGivesTheApplyRateAndPublishTimes(t *testing.T) {
	publish := Histogram{Bounds: []float64{0.001, 0.002, math.Inf(1)}, Counts: []float64{50, 100, 100}, Count: 100}
	table := BurstTable([]Burst{{Label: "single puts", Events: 10000, Revisions: 10000, EventsApplied: 10000,
		Acked: 900 * time.Millisecond, Applied: time.Second, Publish: publish}})
	line := lineOf(t, table, "| single puts |")
	for _, want := range []string{"| 10000 | 10k |", "| 100ms |", "| 1ms / 1.98ms |"} {
		if !strings.Contains(line, want) {
			t.Errorf("burst line lacks %q:\n%s", want, line)
		}
	}
}

func TestHistogramQuantileInterpolatesWithinTheBucket(t *testing.T) {
	before := Histogram{Bounds: []float64{1, 2, 4, math.Inf(1)}, Counts: []float64{10, 10, 10, 10}, Count: 10, Sum: 5}
	after := Histogram{Bounds: before.Bounds, Counts: []float64{10, 14, 20, 21}, Count: 21, Sum: 40}
	d := after.Sub(before)
	if d.Count != 11 || d.Sum != 35 {
		t.Fatalf("difference: count %v sum %v, want 11 and 35", d.Count, d.Sum)
	}
	for q, want := range map[float64]time.Duration{
		0.2:  1550 * time.Millisecond, // rank 2.2 of 4 in (1, 2]
		0.5:  2500 * time.Millisecond, // rank 5.5: 1.5 of 6 in (2, 4]
		0.99: 4 * time.Second,         // in +Inf: the last finite bound
	} {
		if got := d.Quantile(q); got != want {
			t.Errorf("q%.2f = %s, want %s", q, got, want)
		}
	}
	if (Histogram{}).Quantile(0.5) != 0 {
		t.Error("an empty histogram has no quantile")
	}
}

func TestRoundDurationKeepsThreeDigits(t *testing.T) {
	for d, want := range map[time.Duration]string{
		571742 * time.Microsecond: "572ms", 63061 * time.Microsecond: "63.1ms", 4812 * time.Nanosecond: "4.81µs",
		2134 * time.Millisecond: "2.13s", 999 * time.Nanosecond: "999ns",
	} {
		if got := roundDuration(d).String(); got != want {
			t.Errorf("roundDuration(%s) = %s, want %s", d, got, want)
		}
	}
}
