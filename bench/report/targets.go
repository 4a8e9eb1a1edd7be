package report

import (
	"fmt"
	"strings"
)

// Target is one goal of the benchmark and whether the measurement meets it.
type Target struct {
	Goal     string
	Measured string
	// ByCPU is the same ratio from CPU time per query (queries per
	// CPU-second), for the QPS goals: what QPS would show if the server,
	// not the machine or the load generator, were the limit.
	ByCPU string
	// Verdict is "met", "missed" or "not measured".
	Verdict string
}

// Targets checks skydns against the goals: first instructions per query
// ≤ 1.2× the fixed-answer server, QPS ≥ 0.9× it and ≥ 20× CoreDNS-etcd
// without cache; then the stretch: QPS ≥ 1.0× dnsmasq and ≤ 15k
// instructions per query; last, CPU per query against Knot DNS and the
// kernel floor, and the DO-bit mix's against the plain one.
func Targets(rows []Row) []Target {
	sky, fixed, dnsmasq, core := Find(rows, SkyDNS), Find(rows, Fixed), Find(rows, Dnsmasq), Find(rows, CoreDNS)
	return append([]Target{
		firstAsk(atMost("instructions/query ≤ 1.2× fixed-answer", Ratio(sky.TotalInstr(), fixed.TotalInstr()), 1.2), sky),
		qps("QPS ≥ 0.9× fixed-answer", sky, fixed, 0.9),
		qps("QPS ≥ 20× CoreDNS-etcd without cache", sky, core, 20),
		qps("stretch: QPS ≥ 1.0× dnsmasq", sky, dnsmasq, 1.0),
		firstAsk(instrLimit("stretch: ≤ 15k instructions/query", sky.TotalInstr(), 15000), sky),
	}, floorTargets(rows)...)
}

// firstAsk adds to an instructions target what a query costs the first
// time it is asked, which the steady-state figure leaves out.
func firstAsk(t Target, r Row) Target {
	if r.FirstInstr > 0 && t.Verdict != "not measured" {
		t.Measured += fmt.Sprintf(" (first ask %s)", count(r.FirstInstr))
	}
	return t
}

// qps judges the measured QPS ratio and notes the CPU-time one.
func qps(goal string, sky, ref Row, limit float64) Target {
	t := atLeast(goal, Ratio(sky.QPS(), ref.QPS()), limit)
	if x := Ratio(sky.PerCPUSecond(), ref.PerCPUSecond()); x > 0 {
		t.ByCPU = fmt.Sprintf("%.2f×", x)
	}
	return t
}

func atMost(goal string, x, limit float64) Target {
	return judge(goal, fmt.Sprintf("%.2f×", x), x, x <= limit)
}

func atLeast(goal string, x, limit float64) Target {
	return judge(goal, fmt.Sprintf("%.2f×", x), x, x >= limit)
}

func instrLimit(goal string, x, limit float64) Target {
	return judge(goal, count(x), x, x <= limit)
}

func judge(goal, measured string, x float64, ok bool) Target {
	switch {
	case x == 0:
		return Target{Goal: goal, Measured: "—", Verdict: "not measured"}
	case ok:
		return Target{Goal: goal, Measured: measured, Verdict: "met"}
	default:
		return Target{Goal: goal, Measured: measured, Verdict: "missed"}
	}
}

// TargetsTable formats targets as a Markdown table.
func TargetsTable(ts []Target) string {
	var b strings.Builder
	b.WriteString("| target (skydns) | measured | verdict | by CPU time per query |\n|---|---:|---|---:|\n")
	for _, t := range ts {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", t.Goal, t.Measured, t.Verdict, valueOr(t.ByCPU, "—"))
	}
	return b.String()
}
