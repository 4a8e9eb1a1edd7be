package report

import (
	"strings"
	"testing"
	"time"
)

func TestMedianOfOddAndEvenCounts(t *testing.T) {
	cases := []struct {
		xs   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}}
	for _, c := range cases {
		if got := Median(c.xs); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
	xs := []float64{3, 1, 2}
	Median(xs)
	if xs[0] != 3 {
		t.Error("Median sorted its argument")
	}
	if got := MedianDuration([]time.Duration{time.Second, 3 * time.Second, 2 * time.Second}); got != 2*time.Second {
		t.Errorf("MedianDuration = %s", got)
	}
}

func TestRatioOfUnknownIsZero(t *testing.T) {
	if Ratio(0, 5) != 0 || Ratio(5, 0) != 0 || Ratio(6, 3) != 2 {
		t.Fatal("Ratio")
	}
}

// rows is a comparison in which skydns is twice as fast as CoreDNS and
// costs 1.5× the fixed server's instructions.
func rows() []Row {
	sample := func(qps float64, cpu time.Duration) Sample {
		return Sample{QPS: qps, Avg: time.Millisecond, P99: 3 * time.Millisecond, Completed: 1000, Lost: 10,
			CPUPerQuery: cpu, CPUBusy: 0.45, RSS: 30 << 20, Rcodes: map[string]int{"NOERROR A": 9, "NXDOMAIN A": 1}}
	}
	return []Row{
		{Server: SkyDNS, Samples: []Sample{sample(20000, 20*time.Microsecond), sample(40000, 10*time.Microsecond), sample(30000, 15*time.Microsecond)}, Instr: 45000},
		{Server: CoreDNS, Samples: []Sample{{QPS: 15000, CPUPerQuery: 100 * time.Microsecond, EtcdCPUPerQuery: 500 * time.Microsecond}}, Instr: 300000, EtcdInstr: 900000},
		{Server: Dnsmasq, Samples: []Sample{sample(60000, 5*time.Microsecond)}, Instr: 12000},
		{Server: Fixed, Samples: []Sample{sample(40000, 10*time.Microsecond)}, Instr: 30000},
	}
}

func TestDNSTableShowsMediansAndRatios(t *testing.T) {
	table := DNSTable(rows())
	sky := lineOf(t, table, "| skydns |")
	for _, want := range []string{"30k (20k–40k) | 0.75× | 0.50× | 2.00× | 45 % | 15.0 | 67k | 0.67× | 0.33× | 40.00× | 45k | 1.50× | 3.75× | 0.037× |",
		"1000 µs", "3000 µs", "30 (0.99 %)", "30.0"} {
		if !strings.Contains(sky, want) {
			t.Errorf("skydns line lacks %q:\n%s", want, sky)
		}
	}
	core := lineOf(t, table, "| coredns-etcd |")
	if !strings.Contains(core, "100 + 500 etcd") || !strings.Contains(core, "300k + 900k etcd") {
		t.Errorf("CoreDNS line does not split etcd's share:\n%s", core)
	}
}

func TestDNSTableMarksMissingFigures(t *testing.T) {
	table := DNSTable([]Row{{Server: SkyDNS, Problem: "not serving"}})
	if strings.Count(lineOf(t, table, "| skydns |"), "—") != 18 {
		t.Errorf("a row without figures:\n%s", table)
	}
}

func TestAnswersTableGivesSharesByQueryType(t *testing.T) {
	rs := rows()
	rs[0].Problem = "callgrind failed"
	table := AnswersTable(rs)
	if line := lineOf(t, table, "| skydns |"); !strings.Contains(line, "A: NOERROR 90.0 %, NXDOMAIN 10.0 %") || !strings.Contains(line, "callgrind failed") {
		t.Errorf("skydns answers:\n%s", line)
	}
}

func TestTargetsJudgeSkyDNS(t *testing.T) {
	checkVerdicts(t, rows(), map[string]string{
		"instructions/query ≤ 1.2× fixed-answer": "missed 1.50× ",
		"QPS ≥ 0.9× fixed-answer":                "missed 0.75× 0.67×",
		"QPS ≥ 20× CoreDNS-etcd without cache":   "missed 2.00× 40.00×",
		"stretch: QPS ≥ 1.0× dnsmasq":            "missed 0.50× 0.33×",
		"stretch: ≤ 15k instructions/query":      "missed 45k ",
		"CPU/query ≤ 1.0× Knot DNS":              "not measured — ",
	})
	fast := rows()
	fast[0].Instr = 14000
	if tg := Targets(fast)[0]; tg.Verdict != "met" {
		t.Errorf("14k vs 30k instructions: %+v", tg)
	}
	fast[0].FirstInstr = 26000
	if tg := Targets(fast)[4]; tg.Verdict != "met" || tg.Measured != "14k (first ask 26k)" {
		t.Errorf("14k steady, 26k first ask: %+v", tg)
	}
	if table := DNSTable(fast); !strings.Contains(table, "| 14k (first ask 26k) |") {
		t.Errorf("the instructions cell lacks the first ask:\n%s", table)
	}
	if tg := Targets([]Row{{Server: SkyDNS}})[1]; tg.Verdict != "not measured" {
		t.Errorf("no figures: %+v", tg)
	}
}

func TestBreakdownTableHasAColumnPerServerWithOne(t *testing.T) {
	rs := rows()
	rs[0].Breakdown = map[string]float64{"gc": 5000, "stack": 12000}
	rs[3].Breakdown = map[string]float64{"stack": 8000}
	table := BreakdownTable(rs, []string{"stack", "gc"})
	if !strings.Contains(table, "| skydns | fixed-answer |") || !strings.Contains(table, "| stack | 12k | 8.0k |") ||
		!strings.Contains(table, "| total | 17k | 8.0k |") {
		t.Errorf("breakdown table:\n%s", table)
	}
	if BreakdownTable(rows(), []string{"gc"}) != "" {
		t.Error("no breakdowns: want no table")
	}
}

func TestVisibilityLine(t *testing.T) {
	v := Visibility{Services: 50000, Samples: []time.Duration{time.Millisecond, 3 * time.Millisecond, 2 * time.Millisecond},
		Acks: []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond}}
	line := VisibilityLine(v)
	if !strings.Contains(line, "50000 services") || !strings.Contains(line, "median 2ms, max 3ms") {
		t.Errorf("line %q", line)
	}
	if !strings.Contains(VisibilityLine(Visibility{}), "not measured") {
		t.Error("no samples")
	}
}

func lineOf(t *testing.T, table, prefix string) string {
	t.Helper()
	for _, line := range strings.Split(table, "\n") {
		if strings.HasPrefix(line, prefix) {
			return line
		}
	}
	t.Fatalf("no line %q in\n%s", prefix, table)
	return ""
}

func TestFloorTableAndTargetsCompareCPUWithTheFloorAndKnot(t *testing.T) {
	cpu := func(d time.Duration) []Sample { return []Sample{{QPS: 100000, CPUPerQuery: d, CPUBusy: 0.9}} }
	rs := []Row{
		{Server: Floor, Samples: cpu(4 * time.Microsecond), Instr: 200},
		{Server: Knot, Samples: cpu(5 * time.Microsecond), Instr: 9000},
		{Server: SkyDNS, Samples: cpu(4500 * time.Nanosecond), Instr: 3000},
		{Server: SkyDNSDO, Samples: cpu(6300 * time.Nanosecond)},
	}
	table := FloorTable(rs)
	if line := lineOf(t, table, "| skydns |"); !strings.Contains(line, "| 4.5 | 1.12× | 0.90× | 100k | 90 % | 3.0k | 2.8k |") {
		t.Errorf("skydns line:\n%s", line)
	}
	checkVerdicts(t, rs, map[string]string{
		"CPU/query ≤ 1.0× Knot DNS":                  "met 0.90× (4.5 vs 5.0 µs) ",
		"CPU/query ≤ 1.15× the kernel floor":         "met 1.12× (4.5 vs 4.0 µs) ",
		"DO-bit mix: CPU/query ≤ 1.3× the plain mix": "missed 1.40× (6.3 vs 4.5 µs) ",
	})
	if FloorTable(rs[1:]) != "" {
		t.Error("a run without the floor: want no table")
	}
}

// checkVerdicts checks the targets of rs against want: goal → "verdict
// measured by-CPU".
func checkVerdicts(t *testing.T, rs []Row, want map[string]string) {
	t.Helper()
	verdicts := map[string]string{}
	for _, tg := range Targets(rs) {
		verdicts[tg.Goal] = tg.Verdict + " " + tg.Measured + " " + tg.ByCPU
	}
	for goal, v := range want {
		if verdicts[goal] != v {
			t.Errorf("%s: %q, want %q", goal, verdicts[goal], v)
		}
	}
}
