package report

import (
	"fmt"
	"strings"
	"time"
)

// TCPTable compares the servers over TCP (rows), with skydns's DNS over
// TLS (dot) and UDP (udp) figures from the same rounds as its last lines: QPS, the server's
// CPU per query and the queries one CPU-second answers, instructions per
// query, latency, lost queries and RSS; ratios against CoreDNS-etcd with
// the cache that holds every answer.
func TCPTable(rows []Row, dot, udp Row) string {
	ref := []Row{Find(rows, CoreDNSCacheAll)}
	var b strings.Builder
	b.WriteString("| server | transport | QPS (median, min–max) | ×CoreDNS-cache | server busy | CPU µs/query | queries per CPU-second | ×CoreDNS-cache | instructions/query | avg latency | p99 latency | lost | RSS MB |\n")
	b.WriteString("|---|---|" + strings.Repeat("---:|", 11) + "\n")
	line := func(r Row, transport string) {
		cells := []string{r.Server, transport, qpsCell(r)}
		cells = append(cells, ratios(r.QPS(), ref, Row.QPS)...)
		cells = append(cells, busyCell(r), cpuCell(r), countOrDash(r.PerCPUSecond()))
		cells = append(cells, ratios(r.PerCPUSecond(), ref, Row.PerCPUSecond)...)
		cells = append(cells, instrCell(r), latency(r, func(s Sample) time.Duration { return s.Avg }),
			latency(r, func(s Sample) time.Duration { return s.P99 }), lostCell(r), rssCell(r))
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	for _, r := range rows {
		line(r, "TCP")
	}
	if len(dot.Samples) > 0 {
		line(dot, "DoT")
	}
	if len(udp.Samples) > 0 {
		line(udp, "UDP")
	}
	return b.String()
}

// TCPProblems lists, one line each, why figures of TCPTable's rows are
// missing or suspect; "" when none is.
func TCPProblems(rows []Row, dot, udp Row) string {
	var b strings.Builder
	note := func(r Row, transport string) {
		if r.Problem != "" {
			fmt.Fprintf(&b, "- %s over %s: %s\n", r.Server, transport, r.Problem)
		}
	}
	for _, r := range rows {
		note(r, "TCP")
	}
	note(dot, "DoT")
	note(udp, "UDP")
	return b.String()
}

// TCPTargets checks skydns over TCP against its goals: no query lost,
// QPS ≥ 1.2× CoreDNS-etcd with its cache over TCP, and CPU per TCP query
// ≤ 1.5× its CPU per UDP query (udp: skydns's UDP row of the same
// rounds).
func TCPTargets(rows []Row, udp Row) []Target {
	sky := Find(rows, SkyDNS)
	return []Target{
		noLoss("no query lost over TCP", sky),
		qps("TCP QPS ≥ 1.2× CoreDNS-etcd + cache over TCP", sky, Find(rows, CoreDNSCacheAll), 1.2),
		cpuRatio("CPU per TCP query ≤ 1.5× CPU per UDP query", sky, udp, 1.5),
	}
}

// noLoss judges that r lost no query.
func noLoss(goal string, r Row) Target {
	lost, sent := r.lost()
	if sent == 0 {
		return Target{Goal: goal, Measured: "—", Verdict: "not measured"}
	}
	t := Target{Goal: goal, Measured: fmt.Sprintf("%d lost of %d", lost, sent), Verdict: "met"}
	if lost > 0 {
		t.Verdict = "missed"
	}
	return t
}

// cpuRatio judges a's CPU per query over b's, and notes the ratio of
// their instructions per query when both were counted.
func cpuRatio(goal string, a, b Row, limit float64) Target {
	ca, _ := a.CPU()
	cb, _ := b.CPU()
	t := atMost(goal, Ratio(float64(ca), float64(cb)), limit)
	if x := Ratio(a.TotalInstr(), b.TotalInstr()); x > 0 && t.Verdict != "not measured" {
		t.Measured += fmt.Sprintf(" (instructions %.2f×)", x)
	}
	return t
}
