package report

import (
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

func forwardRow(server string, cpu time.Duration, qps float64, rss float64, storm int) ForwardRow {
	return ForwardRow{Row: Row{Server: server, Samples: []Sample{{QPS: qps, CPUPerQuery: cpu, Completed: 1000}}},
		RSSPerEntry: rss, StormUpstream: storm, StormAnswered: 1000}
}

func TestForwardTargetsJudgeSkyDNSAgainstEveryOtherCache(t *testing.T) {
	sky := forwardRow("skydns", 8*time.Microsecond, 100e3, 500, 1)
	sky.Outage = Outage{
		Stale: []Probe{{Latency: 1900 * time.Millisecond, Answers: 1}, {Latency: time.Millisecond, Answers: 1}},
		New:   []Probe{{Latency: 4 * time.Second, Rcode: dns.RcodeServerFailure}, {Rcode: NoAnswer}},
	}
	rows := []ForwardRow{sky, forwardRow("unbound", 9*time.Microsecond, 90e3, 600, 1), forwardRow("dnsmasq", 10*time.Microsecond, 120e3, 0, 3)}
	verdicts := map[string]string{}
	for _, target := range ForwardTargets(rows, "skydns", "unbound", 1800*time.Millisecond) {
		verdicts[target.Goal] = target.Verdict
	}
	want := map[string]string{
		"CPU per cached answer ≤ Unbound's":         "met",
		"QPS of cache hits ≥ unbound's":             "met",
		"QPS of cache hits ≥ dnsmasq's":             "missed",
		"a miss storm sends 1 upstream query":       "met",
		"RSS per cached name ≤ Unbound's":           "met",
		"outage: first stale answer within 1.8s":    "missed",
		"outage: every later expired name answered": "met",
		"outage: new names answered, not timed out": "missed",
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

func TestForwardTablesHaveALinePerServerAndItsProblems(t *testing.T) {
	sky := forwardRow("skydns", 8*time.Microsecond, 100e3, 500, 1)
	sky.Misses = []Misses{{Completed: 10, P50: 300 * time.Microsecond, Upstream: 1}, {Latency: 20 * time.Millisecond, Completed: 10, P50: 21 * time.Millisecond, Upstream: 1}}
	broken := ForwardRow{Row: Row{Server: "kresd", Problem: "not serving: exited"}}
	hits := HitsTable([]ForwardRow{sky, broken})
	if !strings.Contains(hits, "| skydns | 100k") || !strings.Contains(hits, "| kresd | — |") || !strings.Contains(hits, "kresd: not serving: exited") {
		t.Fatalf("hits table:\n%s", hits)
	}
	misses := MissesTable([]ForwardRow{sky, broken}, 1000)
	if !strings.Contains(misses, "+20ms: p50 µs") || !strings.Contains(misses, "| skydns | 300 |") || !strings.Contains(misses, "| kresd | — | — | — | — | — | — | — | — | — | — |") {
		t.Fatalf("misses table:\n%s", misses)
	}
}

func TestOutageTableSaysWhatEachProbeGot(t *testing.T) {
	r := ForwardRow{Row: Row{Server: "unbound"}, Outage: Outage{ServeStale: "serve-expired",
		Stale: []Probe{{Latency: 1801 * time.Millisecond, Answers: 1}, {Latency: 2 * time.Millisecond, Answers: 1}, {Rcode: NoAnswer, Latency: 5 * time.Second}},
		New:   []Probe{{Latency: 5 * time.Second, Rcode: NoAnswer}, {Rcode: dns.RcodeServerFailure, Latency: time.Millisecond}},
	}}
	table := OutageTable([]ForwardRow{r, {Row: Row{Server: "none"}}})
	for _, want := range []string{"| unbound | serve-expired | 1.801 s NOERROR | 1 of 2 | 5.000 s | time-out | 1 SERVFAIL | 0.001 s |", "| none | — | — |"} {
		if !strings.Contains(table, want) {
			t.Errorf("no %q in\n%s", want, table)
		}
	}
}

func TestSearchPathTableAddsTheWalk(t *testing.T) {
	row := func(cpu time.Duration) Row {
		return Row{Samples: []Sample{{QPS: 1000, CPUPerQuery: cpu, Completed: 1000}}}
	}
	s := SearchPath{Plain: row(5 * time.Microsecond), ZoneNX: row(4 * time.Microsecond), Autopath: row(30 * time.Microsecond), ZoneAnswer: row(3 * time.Microsecond)}
	table := SearchPathTable(s)
	if !strings.Contains(table, "| 4 | 1.0k (1.0k–1.0k) | 4.0 | 17.0 | 3.40× |") || !strings.Contains(table, "| 30.0 | 30.0 | 6.00× |") {
		t.Fatalf("table:\n%s", table)
	}
	ts := SearchPathTargets(s)
	if ts[0].Verdict != "missed" || ts[1].Verdict != "missed" || ts[1].Measured != "1.33×" {
		t.Fatalf("targets %+v", ts)
	}
}
