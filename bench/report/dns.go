package report

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The servers the tables compare, by the names the rows carry.
const (
	SkyDNS       = "skydns"
	CoreDNS      = "coredns-etcd"
	CoreDNSCache = "coredns-etcd-cache30"
	// CoreDNSCacheAll is CoreDNS-etcd behind a cache that holds every
	// answer of the data set for the whole bench: the TCP comparison's.
	CoreDNSCacheAll = "coredns-etcd-cache-all"
	Dnsmasq         = "dnsmasq"
	Fixed           = "fixed-answer"
	// SkyDNSDO is skydns with a signed zone, asked with the DO bit.
	SkyDNSDO = "skydns-do"
	// Floor answers every query with one fixed A record, batched: the
	// kernel's cost of a UDP query and its answer.
	Floor = "floor"
	Knot  = "knot"
	NSD   = "nsd"
)

// Sample is one server's figures from one timed dnsperf run.
type Sample struct {
	QPS             float64
	Avg, P99        time.Duration
	Completed, Lost int
	CPUPerQuery     time.Duration // the server's own CPU
	CPUBusy         float64       // the share of the run the server (and etcd) used a CPU
	EtcdCPUPerQuery time.Duration // etcd's CPU, for servers that read etcd per query
	RSS             int64
	Rcodes          map[string]int // "NOERROR A" → count
	RunTime         time.Duration
}

// Row is one server's figures over all rounds and its callgrind pass.
type Row struct {
	Server  string
	Samples []Sample
	// Instr and EtcdInstr are instructions per query; zero: not measured.
	// For a server that answers from memory, Instr is the steady state:
	// the queries asked a second time.
	Instr, EtcdInstr float64
	// FirstInstr is the instructions per query the first time each query
	// is asked (caches cold); zero: not measured.
	FirstInstr float64
	// Breakdown is the instructions per query by where they go (from the
	// busy callgrind window, idle work included); nil: not measured.
	Breakdown map[string]float64
	// Problem says why figures are missing or suspect.
	Problem string
	// Notes qualify the figures.
	Notes []string
}

// QPS is the median QPS over the rounds.
func (r Row) QPS() float64 { return Median(r.floats(func(s Sample) float64 { return s.QPS })) }

// CPU is the median CPU per query of the server and of etcd.
func (r Row) CPU() (server, etcd time.Duration) {
	return MedianDuration(r.durations(func(s Sample) time.Duration { return s.CPUPerQuery })),
		MedianDuration(r.durations(func(s Sample) time.Duration { return s.EtcdCPUPerQuery }))
}

// PerCPUSecond is how many queries one CPU-second of the server (and of
// etcd behind it) answers: the QPS it would reach with a whole CPU.
func (r Row) PerCPUSecond() float64 {
	server, etcd := r.CPU()
	if server+etcd == 0 {
		return 0
	}
	return float64(time.Second) / float64(server+etcd)
}

// TotalInstr is the instructions per query of the server and etcd.
func (r Row) TotalInstr() float64 { return r.Instr + r.EtcdInstr }

func (r Row) floats(f func(Sample) float64) []float64 {
	out := make([]float64, len(r.Samples))
	for i, s := range r.Samples {
		out[i] = f(s)
	}
	return out
}

func (r Row) durations(f func(Sample) time.Duration) []time.Duration {
	out := make([]time.Duration, len(r.Samples))
	for i, s := range r.Samples {
		out[i] = f(s)
	}
	return out
}

// lost is the total of lost queries and of all queries sent.
func (r Row) lost() (lost, sent int) {
	for _, s := range r.Samples {
		lost += s.Lost
		sent += s.Lost + s.Completed
	}
	return lost, sent
}

func (r Row) maxRSS() int64 {
	var m int64
	for _, s := range r.Samples {
		m = max(m, s.RSS)
	}
	return m
}

// Find returns the row of server, or a row with no figures.
func Find(rows []Row, server string) Row {
	if i := slices.IndexFunc(rows, func(r Row) bool { return r.Server == server }); i >= 0 {
		return rows[i]
	}
	return Row{Server: server}
}

// DNSTable is the comparison table: one line per server, absolute figures
// and ratios against the fixed-answer server, dnsmasq and CoreDNS-etcd
// without cache. Besides QPS, which on a busy machine is often bound by
// the load generator, it gives the server's CPU per query and the queries
// one CPU-second answers, and instructions per query.
func DNSTable(rows []Row) string {
	refs := []Row{Find(rows, Fixed), Find(rows, Dnsmasq), Find(rows, CoreDNS)}
	var b strings.Builder
	b.WriteString("| server | QPS (median, min–max) | ×fixed | ×dnsmasq | ×CoreDNS | server busy | CPU µs/query | queries per CPU-second | ×fixed | ×dnsmasq | ×CoreDNS | instructions/query | ×fixed | ×dnsmasq | ×CoreDNS | avg latency | p99 latency | lost | RSS MB |\n")
	b.WriteString("|---|" + strings.Repeat("---:|", 18) + "\n")
	for _, r := range rows {
		cells := []string{r.Server, qpsCell(r)}
		cells = append(cells, ratios(r.QPS(), refs, Row.QPS)...)
		cells = append(cells, busyCell(r), cpuCell(r), countOrDash(r.PerCPUSecond()))
		cells = append(cells, ratios(r.PerCPUSecond(), refs, Row.PerCPUSecond)...)
		cells = append(cells, instrCell(r))
		cells = append(cells, ratios(r.TotalInstr(), refs, Row.TotalInstr)...)
		cells = append(cells, latency(r, func(s Sample) time.Duration { return s.Avg }),
			latency(r, func(s Sample) time.Duration { return s.P99 }), lostCell(r), rssCell(r))
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	return b.String()
}

// ratios are x over each reference's figure.
func ratios(x float64, refs []Row, figure func(Row) float64) []string {
	out := make([]string, len(refs))
	for i, ref := range refs {
		out[i] = ratio(x, figure(ref))
	}
	return out
}

func busyCell(r Row) string {
	if len(r.Samples) == 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f %%", 100*Median(r.floats(func(s Sample) float64 { return s.CPUBusy })))
}

func countOrDash(x float64) string {
	if x == 0 {
		return "—"
	}
	return count(x)
}

func qpsCell(r Row) string {
	if len(r.Samples) == 0 {
		return "—"
	}
	qs := r.floats(func(s Sample) float64 { return s.QPS })
	return fmt.Sprintf("%s (%s–%s)", count(Median(qs)), count(slices.Min(qs)), count(slices.Max(qs)))
}

func ratio(a, b float64) string {
	x := Ratio(a, b)
	switch {
	case x == 0:
		return "—"
	case x < 0.1:
		return fmt.Sprintf("%.3f×", x)
	default:
		return fmt.Sprintf("%.2f×", x)
	}
}

func latency(r Row, f func(Sample) time.Duration) string {
	if len(r.Samples) == 0 {
		return "—"
	}
	return micros(MedianDuration(r.durations(f))) + " µs"
}

func lostCell(r Row) string {
	lost, sent := r.lost()
	if sent == 0 {
		return "—"
	}
	return fmt.Sprintf("%d (%.2f %%)", lost, 100*float64(lost)/float64(sent))
}

func cpuCell(r Row) string {
	if len(r.Samples) == 0 {
		return "—"
	}
	server, etcd := r.CPU()
	if etcd > 0 {
		return fmt.Sprintf("%s + %s etcd", micros(server), micros(etcd))
	}
	return micros(server)
}

func instrCell(r Row) string {
	switch {
	case r.Instr == 0:
		return "—"
	case r.EtcdInstr > 0:
		return fmt.Sprintf("%s + %s etcd", count(r.Instr), count(r.EtcdInstr))
	case r.FirstInstr > 0:
		return fmt.Sprintf("%s (first ask %s)", count(r.Instr), count(r.FirstInstr))
	default:
		return count(r.Instr)
	}
}

func rssCell(r Row) string {
	if m := r.maxRSS(); m > 0 {
		return fmt.Sprintf("%.1f", float64(m)/(1<<20))
	}
	return "—"
}

// micros formats a duration in microseconds with up to one decimal.
func micros(d time.Duration) string {
	us := float64(d) / float64(time.Microsecond)
	if us >= 100 {
		return fmt.Sprintf("%.0f", us)
	}
	return fmt.Sprintf("%.1f", us)
}

// count formats a number with a k or M suffix.
func count(x float64) string {
	switch {
	case x >= 10e6:
		return fmt.Sprintf("%.0fM", x/1e6)
	case x >= 1e6:
		return fmt.Sprintf("%.1fM", x/1e6)
	case x >= 10e3:
		return fmt.Sprintf("%.0fk", x/1e3)
	case x >= 1e3:
		return fmt.Sprintf("%.1fk", x/1e3)
	default:
		return fmt.Sprintf("%.0f", x)
	}
}
