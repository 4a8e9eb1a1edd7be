package report

import (
	"fmt"
	"strings"
	"time"
)

// SearchPath is the search-path workload of one skydns: runs of the
// plain external query, of the three zone NXDOMAINs a pod's ndots:5 walk
// asks before it (without --autopath), of the walk's first query answered
// by --autopath, and of a zone answer for reference.
type SearchPath struct {
	Plain, ZoneNX, Autopath, ZoneAnswer Row
}

// searchSteps are the zone queries ndots:5 makes before the external name.
const searchSteps = 3

func cpuOf(r Row) time.Duration { c, _ := r.CPU(); return c }

// perName is what one external name costs on each path: the plain query,
// the walk without autopath (three NXDOMAINs and the plain query) and the
// walk's one query with autopath.
func (s SearchPath) perName() (plain, walk, autopath time.Duration) {
	plain, autopath = cpuOf(s.Plain), cpuOf(s.Autopath)
	if nx := cpuOf(s.ZoneNX); nx > 0 && plain > 0 {
		walk = searchSteps*nx + plain
	}
	return plain, walk, autopath
}

// SearchPathTable is the search-path workload's table.
func SearchPathTable(s SearchPath) string {
	plain, walk, autopath := s.perName()
	var b strings.Builder
	b.WriteString("| workload | queries a name makes | QPS | CPU µs per query | CPU µs per name | × the plain query |\n|---|---:|---:|---:|---:|---:|\n")
	line := func(name string, queries int, r Row, perName time.Duration) {
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s |\n", name, queries, qpsCell(r), cpuCell(r), durationMicros(perName), ratio(float64(perName), float64(plain)))
	}
	line("plain external name, cached", 1, s.Plain, plain)
	line("without --autopath: the three zone NXDOMAINs (per query), then the plain name", searchSteps+1, s.ZoneNX, walk)
	line("with --autopath: the first search-path query, answered behind a CNAME", 1, s.Autopath, autopath)
	fmt.Fprintf(&b, "| a zone answer (A of a Service), for reference | 1 | %s | %s | — | — |\n", qpsCell(s.ZoneAnswer), cpuCell(s.ZoneAnswer))
	return b.String()
}

func durationMicros(d time.Duration) string {
	if d <= 0 {
		return "—"
	}
	return micros(d)
}

// SearchPathTargets: with --autopath a name costs ≤ 1.2× the plain query;
// without it each zone NXDOMAIN costs no more than a zone answer.
func SearchPathTargets(s SearchPath) []Target {
	plain, _, autopath := s.perName()
	return []Target{
		atMost("search path with --autopath ≤ 1.2× the plain external query", Ratio(float64(autopath), float64(plain)), 1.2),
		atMost("without --autopath, a zone NXDOMAIN of the walk ≤ a zone answer", Ratio(float64(cpuOf(s.ZoneNX)), float64(cpuOf(s.ZoneAnswer))), 1),
	}
}
