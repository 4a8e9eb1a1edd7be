package report

import (
	"strings"
	"testing"
	"time"
)

func forwardRow(server string, cpu time.Duration, qps float64, rss float64, storm int) ForwardRow {
	return ForwardRow{Row: Row{Server: server, Samples: []Sample{{QPS: qps, CPUPerQuery: cpu, Completed: 1000}}},
		RSSPerEntry: rss, StormUpstream: storm, StormAnswered: 1000}
}

func TestForwardTargetsJudgeSkyDNSAgainstEveryOtherCache(t *testing.T) {
	rows := []ForwardRow{
		forwardRow("skydns", 8*time.Microsecond, 100e3, 500, 1),
		forwardRow("unbound", 9*time.Microsecond, 90e3, 600, 1),
		forwardRow("dnsmasq", 10*time.Microsecond, 120e3, 0, 3),
	}
	verdicts := map[string]string{}
	for _, target := range ForwardTargets(rows, "skydns", "unbound") {
		verdicts[target.Goal] = target.Verdict
	}
	want := map[string]string{
		"CPU per cached answer ≤ Unbound's":   "met",
		"QPS of cache hits ≥ unbound's":       "met",
		"QPS of cache hits ≥ dnsmasq's":       "missed",
		"a miss storm sends 1 upstream query": "met",
		"RSS per cached name ≤ Unbound's":     "met",
	}
	for goal, verdict := range want {
		if verdicts[goal] != verdict {
			t.Errorf("%s: %q, want %q (all: %v)", goal, verdicts[goal], verdict, verdicts)
		}
	}
	if len(verdicts) != len(want) {
		t.Errorf("targets %v, want %d", verdicts, len(want))
	}
}

func TestForwardTableHasALinePerServerAndItsProblems(t *testing.T) {
	broken := ForwardRow{Row: Row{Server: "kresd", Problem: "not serving: exited"}}
	table := ForwardTable([]ForwardRow{forwardRow("skydns", 8*time.Microsecond, 100e3, 500, 1), broken}, 1000)
	if !strings.Contains(table, "| skydns | 100k") || !strings.Contains(table, "| kresd | — |") || !strings.Contains(table, "kresd: not serving: exited") {
		t.Fatalf("table:\n%s", table)
	}
}
