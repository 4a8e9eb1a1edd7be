package report

import (
	"strings"
	"testing"
	"time"
)

// tcpRows is a TCP comparison in which skydns answers 1.5× CoreDNS's QPS
// and loses nothing, at 6 µs per TCP query against 5 µs over UDP.
func tcpRows() ([]Row, Row) {
	sample := func(qps float64, cpu time.Duration, lost int) Sample {
		return Sample{QPS: qps, Completed: 1000, Lost: lost, CPUPerQuery: cpu, CPUBusy: 0.9, P99: time.Millisecond}
	}
	rows := []Row{
		{Server: SkyDNS, Samples: []Sample{sample(90000, 6*time.Microsecond, 0), sample(60000, 6*time.Microsecond, 0)}, Instr: 3000},
		{Server: CoreDNSCacheAll, Samples: []Sample{sample(50000, 15*time.Microsecond, 0)}},
		{Server: Dnsmasq, Samples: []Sample{sample(20000, 20*time.Microsecond, 7)}, Instr: 30000},
	}
	udp := Row{Server: SkyDNS, Samples: []Sample{sample(100000, 5*time.Microsecond, 0)}, Instr: 2500}
	return rows, udp
}

// dotRow is skydns over DNS over TLS at 40k QPS, 8 µs per query.
var dotRow = Row{Server: SkyDNS, Samples: []Sample{{QPS: 40000, Completed: 1000, CPUPerQuery: 8 * time.Microsecond, CPUBusy: 0.9, P99: time.Millisecond}}}

func TestTCPTableEndsWithSkyDNSOverUDP(t *testing.T) {
	rows, udp := tcpRows()
	table := TCPTable(rows, Row{}, udp)
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) != 6 {
		t.Fatalf("%d lines, want a header, a rule, three TCP rows and the UDP one (no DoT row without samples):\n%s", len(lines), table)
	}
	if want := "| skydns | TCP | 75k (60k–90k) | 1.50× |"; !strings.HasPrefix(lines[2], want) {
		t.Errorf("skydns over TCP: %s\nwant it to start with %s", lines[2], want)
	}
	if !strings.HasPrefix(lines[5], "| skydns | UDP | 100k") || !strings.Contains(lines[5], "| 2.5k |") {
		t.Errorf("the last line is not skydns over UDP with its instructions: %s", lines[5])
	}
	if !strings.Contains(lines[4], "7 (0.70 %)") {
		t.Errorf("dnsmasq's lost queries missing: %s", lines[4])
	}
}

func TestTCPTargetsJudgeLossQPSAndCPU(t *testing.T) {
	rows, udp := tcpRows()
	want := []struct{ measured, verdict string }{
		{"0 lost of 2000", "met"},
		{"1.50×", "met"},
		{"1.20× (instructions 1.20×)", "met"},
	}
	got := TCPTargets(rows, udp)
	for i, w := range want {
		if got[i].Measured != w.measured || got[i].Verdict != w.verdict {
			t.Errorf("target %q: %q %s, want %q %s", got[i].Goal, got[i].Measured, got[i].Verdict, w.measured, w.verdict)
		}
	}
	rows[0].Samples[0].Lost = 3
	if lost := TCPTargets(rows, udp)[0]; lost.Verdict != "missed" {
		t.Errorf("3 lost: %+v, want missed", lost)
	}
	if none := TCPTargets(nil, Row{}); none[0].Verdict != "not measured" || none[2].Verdict != "not measured" {
		t.Errorf("no rows: %+v", none)
	}
}

func TestTCPTableHasSkyDNSOverTLSBeforeUDP(t *testing.T) {
	rows, udp := tcpRows()
	lines := strings.Split(strings.TrimSpace(TCPTable(rows, dotRow, udp)), "\n")
	if len(lines) != 7 {
		t.Fatalf("%d lines, want a header, a rule, three TCP rows, the DoT one and the UDP one", len(lines))
	}
	if want := "| skydns | DoT | 40k (40k–40k) | 0.80× | 90 % | 8.0 |"; !strings.HasPrefix(lines[5], want) {
		t.Errorf("skydns over DoT: %s\nwant it to start with %s", lines[5], want)
	}
	if !strings.HasPrefix(lines[6], "| skydns | UDP |") {
		t.Errorf("the last line is not skydns over UDP: %s", lines[6])
	}
}

func TestTCPProblemsNameTheServerAndTransport(t *testing.T) {
	rows, udp := tcpRows()
	if got := TCPProblems(rows, dotRow, udp); got != "" {
		t.Errorf("no problem: %q, want nothing", got)
	}
	rows[2].Problem = "not serving"
	want := "- dnsmasq over TCP: not serving\n- skydns over DoT: no certificate\n"
	if got := TCPProblems(rows, Row{Server: SkyDNS, Problem: "no certificate"}, udp); got != want {
		t.Errorf("problems %q, want %q", got, want)
	}
}
