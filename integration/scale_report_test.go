package integration

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kubesky/kubesky/integration/harness"
)

// table is a Markdown table under a heading.
type table struct {
	title  string
	header []string
	rows   [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// String renders the heading, the table and a blank line.
func (t *table) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n", t.title)
	line := func(cells []string) { fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | ")) }
	line(t.header)
	sep := make([]string, len(t.header))
	for i := range sep {
		sep[i] = "---"
		if i > 0 {
			sep[i] = "---:"
		}
	}
	line(sep)
	for _, r := range t.rows {
		line(r)
	}
	b.WriteString("\n")
	return b.String()
}

// targetCells are the target, ratio and verdict columns of a measure that
// should stay at or below target.
func targetCells(measured, target time.Duration) []string {
	ratio := float64(measured) / float64(target)
	verdict := "met"
	if measured > target {
		verdict = "missed"
	}
	return []string{"≤ " + fmtDuration(target), fmt.Sprintf("%.2f×", ratio), verdict}
}

// zeroCells are the target, ratio and verdict columns of a count that
// should be zero.
func zeroCells(n float64) []string {
	if n == 0 {
		return []string{"0", "—", "met"}
	}
	return []string{"0", "—", "missed"}
}

// noTarget fills the target, ratio and verdict columns of a plain figure.
var noTarget = []string{"—", "—", "—"}

// row joins a measure's name and value with its target columns.
func row(name, value string, target []string) []string {
	return append([]string{name, value}, target...)
}

// fmtDuration prints a duration with three significant digits in a unit
// that suits it.
func fmtDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "−" + fmtDuration(-d)
	case d >= time.Second:
		return fmt.Sprintf("%.3g s", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.3g ms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.3g µs", float64(d)/float64(time.Microsecond))
	}
}

// fmtCount prints a whole number with thousands separators.
func fmtCount[N int | int64 | float64](n N) string {
	s := fmt.Sprintf("%d", int64(n))
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// fmtMB prints bytes as megabytes (2^20).
func fmtMB(bytes int64) string {
	return fmt.Sprintf("%.1f MB", float64(bytes)/(1<<20))
}

// percentiles returns the p-th percentiles of latencies (nearest rank,
// see percentile), zeros when there are none.
func percentiles(latencies []time.Duration, ps ...int) []time.Duration {
	out := make([]time.Duration, len(ps))
	if len(latencies) == 0 {
		return out
	}
	sorted := slices.Clone(latencies)
	slices.Sort(sorted)
	for i, p := range ps {
		out[i] = percentile(sorted, p)
	}
	return out
}

// slogTime reads the time= attribute of a line of Go's slog text handler
// (`time=2026-01-02T15:04:05.678Z level=INFO msg=...`).
func slogTime(line string) (time.Time, error) {
	for field := range strings.FieldsSeq(line) {
		if v, ok := strings.CutPrefix(field, "time="); ok {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return time.Time{}, fmt.Errorf("log line %q: time %q: %w", line, v, err)
			}
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("log line %q has no time= attribute", line)
}

// leLabel finds a histogram bucket's upper bound in its series.
var leLabel = regexp.MustCompile(`le="([^"]+)"`)

// histogramQuantile returns the upper bound of the bucket that holds the
// q-quantile (0 < q ≤ 1) of what the Prometheus histogram name observed
// between two scrapes, over its series whose labels contain selector (""
// for all), and false when it observed nothing.
func histogramQuantile(before, after harness.Metrics, name, selector string, q float64) (float64, bool) {
	type bucket struct{ le, count float64 }
	var buckets []bucket
	for series, v := range after {
		rest, ok := strings.CutPrefix(series, name+"_bucket{")
		m := leLabel.FindStringSubmatch(rest)
		if !ok || m == nil || !strings.Contains(rest, selector) {
			continue
		}
		le, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			continue
		}
		buckets = append(buckets, bucket{le, v - before[series]})
	}
	slices.SortFunc(buckets, func(a, b bucket) int { return cmp.Compare(a.le, b.le) })
	if len(buckets) == 0 || buckets[len(buckets)-1].count == 0 {
		return 0, false
	}
	want := q * buckets[len(buckets)-1].count
	for _, b := range buckets {
		if b.count >= want {
			return b.le, true
		}
	}
	return math.Inf(1), true
}

// fmtBucket prints a bucket bound in seconds as "≤ <duration>".
func fmtBucket(le float64, ok bool) string {
	switch {
	case !ok:
		return "—"
	case math.IsInf(le, 1):
		return "> the largest bucket"
	}
	return "≤ " + fmtDuration(time.Duration(le*float64(time.Second)))
}
