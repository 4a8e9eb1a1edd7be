package report

import (
	"fmt"
	"strings"
	"time"
)

// ForwardRow is one forwarding cache's figures: Row holds its cache-hit
// runs.
type ForwardRow struct {
	Row
	// RSSPerEntry is the RSS the warm set added, per name (bytes).
	RSSPerEntry float64
	// WarmLost are the queries of the second warm-up pass lost.
	WarmLost int
	// Misses is the run of names never asked, at a fixed rate.
	Misses Misses
	// StormUpstream is how many queries reached the upstream when many
	// clients asked one new name at once; StormAnswered, how many of the
	// clients got an answer.
	StormUpstream, StormAnswered int
}

// Misses are the figures of one run of names never asked before.
type Misses struct {
	P50, P99        time.Duration
	Completed, Lost int
	// Upstream is the upstream queries per query sent.
	Upstream float64
}

// ForwardTable is the comparison of forwarding caches, one line each.
func ForwardTable(rows []ForwardRow, stormClients int) string {
	var b strings.Builder
	b.WriteString("| server | cache hits: QPS | CPU µs/answer | answers per CPU-second | p99 | lost | RSS per cached name | misses: p50 µs | p99 µs | lost | upstream per miss | storm of " +
		fmt.Sprint(stormClients) + ": upstream queries | answered |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Server,
			qpsCell(r.Row), cpuCell(r.Row), countOrDash(r.PerCPUSecond()), latency(r.Row, func(s Sample) time.Duration { return s.P99 }), lostCell(r.Row),
			bytesCell(r.RSSPerEntry), missLatency(r.Misses, r.Misses.P50), missLatency(r.Misses, r.Misses.P99), missLost(r.Misses),
			missUpstream(r.Misses), stormCell(r.StormUpstream, r.StormAnswered), stormCell(r.StormAnswered, r.StormAnswered))
	}
	for _, r := range rows {
		if r.Problem != "" {
			fmt.Fprintf(&b, "\n%s: %s", r.Server, r.Problem)
		}
	}
	return b.String()
}

func bytesCell(x float64) string {
	if x <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f B", x)
}

func missLatency(m Misses, d time.Duration) string {
	if m.Completed == 0 {
		return "—"
	}
	return micros(d)
}

func missLost(m Misses) string {
	if m.Completed+m.Lost == 0 {
		return "—"
	}
	return fmt.Sprint(m.Lost)
}

func missUpstream(m Misses) string {
	if m.Completed == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f", m.Upstream)
}

// stormCell is n, or a dash when the storm got no answer at all.
func stormCell(n, answered int) string {
	if answered == 0 {
		return "—"
	}
	return fmt.Sprint(n)
}

// ForwardTargets checks skydns among the forwarding caches: CPU per cached
// answer ≤ Unbound's, QPS ≥ every other's, one upstream query per storm,
// RSS per cached name ≤ Unbound's.
func ForwardTargets(rows []ForwardRow, skydns, unbound string) []Target {
	sky, unb := findForward(rows, skydns), findForward(rows, unbound)
	skyCPU, _ := sky.CPU()
	unbCPU, _ := unb.CPU()
	ts := []Target{atMost("CPU per cached answer ≤ Unbound's", Ratio(float64(skyCPU), float64(unbCPU)), 1)}
	for _, r := range rows {
		if r.Server != skydns {
			ts = append(ts, qps("QPS of cache hits ≥ "+r.Server+"'s", sky.Row, r.Row, 1))
		}
	}
	storm := judge("a miss storm sends 1 upstream query", fmt.Sprint(sky.StormUpstream), float64(sky.StormAnswered), sky.StormUpstream == 1)
	return append(ts, storm, atMost("RSS per cached name ≤ Unbound's", Ratio(sky.RSSPerEntry, unb.RSSPerEntry), 1))
}

func findForward(rows []ForwardRow, server string) ForwardRow {
	for _, r := range rows {
		if r.Server == server {
			return r
		}
	}
	return ForwardRow{Row: Row{Server: server}}
}
