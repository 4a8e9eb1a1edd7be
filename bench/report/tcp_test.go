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

func TestTCPTableEndsWithSkyDNSOverUDP(t *testing.T) {
	table := TCPTable(tcpRows())
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) != 6 {
		t.Fatalf("%d lines, want a header, a rule, three TCP rows and the UDP one:\n%s", len(lines), table)
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
