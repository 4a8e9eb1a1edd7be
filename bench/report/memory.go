package report

import (
	"fmt"
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
	// RSS and Peak are skydns's resident memory after serving queries.
	RSS, Peak int64
	// HeapInuse is the Go heap in use, from skydns's metrics.
	HeapInuse int64
	// CoreDNSRSS is CoreDNS-etcd's resident memory after the same queries.
	CoreDNSRSS int64
	Problem    string
}

// MemoryTable formats skydns's memory per size, with the ratio of what it
// holds over the base (no services) to the raw bytes of keys and values.
func MemoryTable(sizes []MemorySize) string {
	var base int64
	for _, s := range sizes {
		if s.Services == 0 {
			base = s.RSS
		}
	}
	var b strings.Builder
	b.WriteString("| services | keys | raw keys+values MB | skydns sync | skydns RSS MB (peak) | Go heap in use MB | (RSS − base) ÷ raw | CoreDNS-etcd RSS MB | problem |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, s := range sizes {
		over := "—"
		if base > 0 && s.RawBytes > 0 && s.RSS > 0 {
			over = fmt.Sprintf("%.2f", float64(s.RSS-base)/float64(s.RawBytes))
		}
		fmt.Fprintf(&b, "| %d | %d | %s | %s | %s (%s) | %s | %s | %s | %s |\n", s.Services, s.Keys, mb(s.RawBytes),
			s.Sync.Round(time.Millisecond), mb(s.RSS), mb(s.Peak), mb(s.HeapInuse), over, mb(s.CoreDNSRSS), valueOr(s.Problem, "—"))
	}
	return b.String()
}

func mb(n int64) string {
	if n <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f", float64(n)/(1<<20))
}

// Burst is one burst of etcd writes and how fast skydns applied it.
type Burst struct {
	Label             string
	Events, Revisions int
	// Acked is from the first write until etcd acknowledged the last.
	Acked time.Duration
	// Applied is from the first write until skydns served the last
	// revision.
	Applied time.Duration
	Problem string
}

// BurstTable formats the apply rates.
func BurstTable(bs []Burst) string {
	var b strings.Builder
	b.WriteString("| burst | events | revisions | etcd acked all | skydns applied all | events/s applied | lag after the last ack | problem |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---|\n")
	for _, x := range bs {
		rate := "—"
		if x.Applied > 0 {
			rate = count(float64(x.Events) / x.Applied.Seconds())
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %s | %s | %s | %s |\n", x.Label, x.Events, x.Revisions,
			x.Acked.Round(time.Millisecond), x.Applied.Round(time.Millisecond), rate,
			(x.Applied - x.Acked).Round(time.Millisecond), valueOr(x.Problem, "—"))
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
