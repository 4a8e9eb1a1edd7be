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
	// Half is the cache-hit mix sent at half of the saturation QPS.
	Half Misses
	// Misses are the runs of names never asked, one per upstream latency.
	Misses []Misses
	// StormUpstream is how many queries reached the upstream when many
	// clients asked one new name at once; StormAnswered, how many of the
	// clients got an answer.
	StormUpstream, StormAnswered int
	// Outage is what clients saw while the upstream was unreachable.
	Outage Outage
}

// Misses are the figures of one run at a fixed rate: names never asked
// before, or the cache-hit mix at half of saturation.
type Misses struct {
	// Latency is what the path to the upstream added to each query.
	Latency time.Duration
	// Rate is the queries sent a second.
	Rate            int
	P50, P99        time.Duration
	Completed, Lost int
	// Upstream is the upstream queries per query sent.
	Upstream float64
}

// HitsTable is the cache-hit comparison, one line per forwarder.
func HitsTable(rows []ForwardRow) string {
	var b strings.Builder
	b.WriteString("| server | QPS at saturation | CPU µs/answer | answers per CPU-second | p99 at saturation | lost | at half of saturation: QPS | p50 µs | p99 µs | RSS per cached name |\n" +
		"|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Server,
			qpsCell(r.Row), cpuCell(r.Row), countOrDash(r.PerCPUSecond()), latency(r.Row, func(s Sample) time.Duration { return s.P99 }), lostCell(r.Row),
			rateCell(r.Half), missLatency(r.Half, r.Half.P50), missLatency(r.Half, r.Half.P99), bytesCell(r.RSSPerEntry))
	}
	return b.String() + problems(rows)
}

// MissesTable is the comparison of misses, one line per forwarder and a
// group of columns per upstream latency, with the storm of one new name.
func MissesTable(rows []ForwardRow, stormClients int) string {
	var head, rule strings.Builder
	head.WriteString("| server |")
	rule.WriteString("|---|")
	for _, m := range firstMisses(rows) {
		fmt.Fprintf(&head, " +%s: p50 µs | p99 µs | lost | upstream per miss |", m.Latency)
		rule.WriteString("---:|---:|---:|---:|")
	}
	fmt.Fprintf(&head, " storm of %d: upstream queries | answered |\n", stormClients)
	rule.WriteString("---:|---:|\n")
	var b strings.Builder
	b.WriteString(head.String() + rule.String())
	for _, r := range rows {
		b.WriteString("| " + r.Server + " |")
		for i := range firstMisses(rows) {
			m := Misses{}
			if i < len(r.Misses) {
				m = r.Misses[i]
			}
			fmt.Fprintf(&b, " %s | %s | %s | %s |", missLatency(m, m.P50), missLatency(m, m.P99), missLost(m), missUpstream(m))
		}
		fmt.Fprintf(&b, " %s | %s |\n", stormCell(r.StormUpstream, r.StormAnswered), stormCell(r.StormAnswered, r.StormAnswered))
	}
	return b.String()
}

// firstMisses is the miss runs of the first row that has the most.
func firstMisses(rows []ForwardRow) []Misses {
	var out []Misses
	for _, r := range rows {
		if len(r.Misses) > len(out) {
			out = r.Misses
		}
	}
	return out
}

func problems(rows []ForwardRow) string {
	var b strings.Builder
	for _, r := range rows {
		if r.Problem != "" {
			fmt.Fprintf(&b, "\n%s: %s\n", r.Server, r.Problem)
		}
	}
	return b.String()
}

func rateCell(m Misses) string {
	if m.Completed == 0 {
		return "—"
	}
	return count(float64(m.Rate))
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
// RSS per cached name ≤ Unbound's, and the outage's: the first stale
// answer within limit, every stale name answered, new names answered
// (SERVFAIL) before a client's time-out.
func ForwardTargets(rows []ForwardRow, skydns, unbound string, staleLimit time.Duration) []Target {
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
	ts = append(ts, storm, atMost("RSS per cached name ≤ Unbound's", Ratio(sky.RSSPerEntry, unb.RSSPerEntry), 1))
	return append(ts, sky.Outage.targets(staleLimit)...)
}

func findForward(rows []ForwardRow, server string) ForwardRow {
	for _, r := range rows {
		if r.Server == server {
			return r
		}
	}
	return ForwardRow{Row: Row{Server: server}}
}
