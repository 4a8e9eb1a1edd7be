package report

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// MemorySize is skydns's memory with one number of services loaded.
type MemorySize struct {
	Services, Keys int
	// RawBytes is the length of every key plus every value.
	RawBytes int64
	// Sync is from process start until the snapshot holds the data.
	Sync time.Duration
	// ListPublish is the time skydns took to build and publish the
	// snapshot of its first list (skydns_snapshot_publish_seconds).
	ListPublish time.Duration
	// RSS and Peak are skydns's resident memory after serving queries.
	RSS, Peak int64
	// HeapInuse is the Go heap in use, from skydns's metrics.
	HeapInuse int64
	// CoreDNSRSS is CoreDNS-etcd's resident memory after the same queries.
	CoreDNSRSS int64
	Problem    string
}

// MemoryBase is the fixed base of the memory target: the RSS of the size
// with no services, 0 when it was not measured.
func MemoryBase(sizes []MemorySize) int64 {
	for _, s := range sizes {
		if s.Services == 0 && s.Problem == "" {
			return s.RSS
		}
	}
	return 0
}

// MemoryTable formats skydns's memory per size against its targets:
// RSS ÷ (2 × raw bytes + base) ≤ 1, with the base the RSS at no services,
// and RSS ÷ CoreDNS-etcd's RSS < 1.
func MemoryTable(sizes []MemorySize) string {
	base := MemoryBase(sizes)
	var b strings.Builder
	b.WriteString("| services | keys | raw keys+values MB | skydns sync | list publish | skydns RSS MB (peak) | Go heap in use MB | RSS ÷ (2×raw + base) | CoreDNS-etcd RSS MB | skydns ÷ CoreDNS-etcd RSS | problem |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, s := range sizes {
		budget, vsCoreDNS := "—", "—"
		if base > 0 && s.RawBytes > 0 && s.RSS > 0 {
			budget = fmt.Sprintf("%.2f", float64(s.RSS)/float64(2*s.RawBytes+base))
		}
		if s.CoreDNSRSS > 0 && s.RSS > 0 {
			vsCoreDNS = fmt.Sprintf("%.2f×", float64(s.RSS)/float64(s.CoreDNSRSS))
		}
		fmt.Fprintf(&b, "| %d | %d | %s | %s | %s | %s (%s) | %s | %s | %s | %s | %s |\n", s.Services, s.Keys, mb(s.RawBytes),
			s.Sync.Round(time.Millisecond), durationOrDash(s.ListPublish), mb(s.RSS), mb(s.Peak), mb(s.HeapInuse), budget,
			mb(s.CoreDNSRSS), vsCoreDNS, valueOr(s.Problem, "—"))
	}
	if base > 0 {
		fmt.Fprintf(&b, "\nBase (RSS with no services, after the same queries): %s MB.\n", mb(base))
	}
	return b.String()
}

// PublishLine says where the snapshot publish times come from, with the
// list publish at the largest size.
func PublishLine(sizes []MemorySize) string {
	line := "Snapshot publish time, from skydns_snapshot_publish_seconds: \"list publish\" is the first full list " +
		"(decode + build + publish); the burst table's p50 / p99 are per watched revision, interpolated within the histogram's " +
		"power-of-2 buckets."
	for i := len(sizes) - 1; i >= 0; i-- {
		if s := sizes[i]; s.ListPublish > 0 {
			return line + fmt.Sprintf(" With %d services: list published in %s.", s.Services, roundDuration(s.ListPublish))
		}
	}
	return line
}

func durationOrDash(d time.Duration) string {
	if d <= 0 {
		return "—"
	}
	return roundDuration(d).String()
}

// roundDuration keeps three significant digits (at least 1 ns).
func roundDuration(d time.Duration) time.Duration {
	unit := time.Duration(1)
	for d >= 1000*unit {
		unit *= 10
	}
	return d.Round(unit)
}

func mb(n int64) string {
	if n <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f", float64(n)/(1<<20))
}

// Histogram is a Prometheus histogram as scraped: cumulative bucket counts
// by upper bound (ascending, +Inf last), the sum and the count.
type Histogram struct {
	Bounds, Counts []float64
	Sum, Count     float64
}

// Sub is the histogram of the observations made between o and h (two
// scrapes of the same series, o first).
func (h Histogram) Sub(o Histogram) Histogram {
	d := Histogram{Bounds: h.Bounds, Counts: make([]float64, len(h.Counts)), Sum: h.Sum - o.Sum, Count: h.Count - o.Count}
	for i := range h.Counts {
		d.Counts[i] = h.Counts[i]
		if i < len(o.Counts) {
			d.Counts[i] -= o.Counts[i]
		}
	}
	return d
}

// Quantile estimates the q-quantile in seconds as Prometheus's
// histogram_quantile does: linear within the bucket that holds it. It is 0
// without observations; in the +Inf bucket it is the last finite bound.
func (h Histogram) Quantile(q float64) time.Duration {
	if h.Count <= 0 || len(h.Bounds) == 0 {
		return 0
	}
	rank, lower, below := q*h.Count, 0.0, 0.0
	for i, upper := range h.Bounds {
		if h.Counts[i] >= rank {
			if math.IsInf(upper, 1) {
				return seconds(lower)
			}
			inBucket := h.Counts[i] - below
			return seconds(lower + (upper-lower)*(rank-below)/inBucket)
		}
		lower, below = upper, h.Counts[i]
	}
	return seconds(lower)
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// Burst is one burst of etcd writes and how fast skydns applied it.
type Burst struct {
	Label             string
	Events, Revisions int
	// Acked is from the first write until etcd acknowledged the last.
	Acked time.Duration
	// Applied is from the first write until skydns served the last
	// revision.
	Applied time.Duration
	// EventsApplied is the increase of skydns_watch_events_applied_total
	// over the burst.
	EventsApplied float64
	// Publish is the skydns_snapshot_publish_seconds{update="watch"}
	// observations made during the burst: one per revision.
	Publish Histogram
	Problem string
}

// BurstTable formats the apply rates: the events skydns counted as
// applied per second of the burst, and the time to publish one revision.
func BurstTable(bs []Burst) string {
	var b strings.Builder
	b.WriteString("| burst | events | revisions | etcd acked all | skydns applied all | events applied (skydns's count) | events/s applied | lag after the last ack | publish per revision p50 / p99 | problem |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, x := range bs {
		rate, publish := "—", "—"
		if x.Applied > 0 {
			rate = count(x.EventsApplied / x.Applied.Seconds())
		}
		if x.Publish.Count > 0 {
			publish = roundDuration(x.Publish.Quantile(0.5)).String() + " / " + roundDuration(x.Publish.Quantile(0.99)).String()
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %s | %.0f | %s | %s | %s | %s |\n", x.Label, x.Events, x.Revisions,
			x.Acked.Round(time.Millisecond), x.Applied.Round(time.Millisecond), x.EventsApplied, rate,
			(x.Applied - x.Acked).Round(time.Millisecond), publish, valueOr(x.Problem, "—"))
	}
	return b.String()
}

// Visibility is the time from an etcd write until skydns answers for it.
type Visibility struct {
	Services int
	Samples  []time.Duration // write start → first correct answer
	Acks     []time.Duration // write start → etcd's acknowledgement
}

// VisibilityLine summarises write→answer latency in one sentence.
func VisibilityLine(v Visibility) string {
	if len(v.Samples) == 0 {
		return "write → answer latency: not measured"
	}
	return fmt.Sprintf("write → answer latency with %d services loaded, %d single puts one after another: median %s, max %s (etcd's acknowledgement alone: median %s)",
		v.Services, len(v.Samples), MedianDuration(v.Samples).Round(time.Microsecond),
		maxDuration(v.Samples).Round(time.Microsecond), MedianDuration(v.Acks).Round(time.Microsecond))
}

func maxDuration(ds []time.Duration) time.Duration {
	var m time.Duration
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}
