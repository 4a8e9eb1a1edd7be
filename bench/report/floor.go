package report

import (
	"fmt"
	"strings"
	"time"
)

// FloorTable compares every server's CPU time and instructions per query
// with the kernel floor's and Knot DNS's from the same run: how much a
// server spends beyond what the kernel spends on a UDP query and its
// answer. Empty when the run has no floor row.
func FloorTable(rows []Row) string {
	floor, knot := Find(rows, Floor), Find(rows, Knot)
	if len(floor.Samples) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("| server | CPU µs/query | ×floor | ×Knot | QPS | server busy | instructions/query | instructions above the floor |\n")
	b.WriteString("|---|" + strings.Repeat("---:|", 7) + "\n")
	for _, r := range rows {
		cpu := float64(cpuTotal(r))
		above := "—"
		if r.TotalInstr() > 0 && floor.TotalInstr() > 0 {
			above = count(r.TotalInstr() - floor.TotalInstr())
		}
		cells := []string{r.Server, cpuCell(r), ratio(cpu, float64(cpuTotal(floor))), ratio(cpu, float64(cpuTotal(knot))),
			countOrDash(r.QPS()), busyCell(r), instrCell(r), above}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	return b.String()
}

// cpuTotal is the median CPU per query of the server and etcd behind it.
func cpuTotal(r Row) time.Duration {
	server, etcd := r.CPU()
	return server + etcd
}

// floorTargets judge skydns's CPU per query against Knot DNS's and the
// kernel floor's, and the signed answers' against the unsigned.
func floorTargets(rows []Row) []Target {
	sky, signed := cpuTotal(Find(rows, SkyDNS)), cpuTotal(Find(rows, SkyDNSDO))
	return []Target{
		cpuAtMost("CPU/query ≤ 1.0× Knot DNS", sky, cpuTotal(Find(rows, Knot)), 1.0),
		cpuAtMost("CPU/query ≤ 1.15× the kernel floor", sky, cpuTotal(Find(rows, Floor)), 1.15),
		cpuAtMost("DO-bit mix: CPU/query ≤ 1.3× the plain mix", signed, sky, 1.3),
	}
}

func cpuAtMost(goal string, cpu, ref time.Duration, limit float64) Target {
	x := Ratio(float64(cpu), float64(ref))
	t := atMost(goal, x, limit)
	if x > 0 {
		t.Measured = fmt.Sprintf("%.2f× (%s vs %s µs)", x, micros(cpu), micros(ref))
	}
	return t
}
