package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/kubesky/kubesky/bench/callgrind"
	"github.com/kubesky/kubesky/bench/report"
)

// results is everything one run measured.
type results struct {
	started    time.Time
	elapsed    time.Duration
	machine    string
	busyAtEnd  string
	rows       []report.Row
	tcp        []report.Row // the servers over TCP
	tcpDoT     report.Row   // skydns over DNS over TLS in the TCP rounds
	tcpUDP     report.Row   // skydns over UDP in the TCP rounds
	profile    string
	sizes      []report.MemorySize
	bursts     []report.Burst
	visibility report.Visibility

	forward        []forwardRow
	forwardProblem string // why the forward part did not run
	forwardProfile string // skydns's CPU profile under the cache-hit mix
	searchPath     report.SearchPath
	searchProfile  string // skydns --autopath's CPU profile under the search path
	searchProblem  string // why the search-path workload did not run
}

// runParts runs the parts the flags ask for, in order.
func (b *bench) runParts(ctx context.Context) results {
	res := results{started: time.Now(), machine: b.machineNote(ctx)}
	for _, name := range b.cfg.servers {
		res.rows = append(res.rows, report.Row{Server: name})
	}
	if b.cfg.runs("dns") {
		b.logf("timed runs: %d rounds of %s per server", b.cfg.rounds, b.cfg.duration)
		b.dnsRounds(ctx, res.rows, &res)
	}
	if b.cfg.runs("callgrind") && ctx.Err() == nil {
		b.logf("callgrind pass")
		b.callgrindPass(ctx, res.rows)
	}
	if b.cfg.runs("tcp") && ctx.Err() == nil {
		b.logf("TCP: %d rounds of %s per server over TCP, and of skydns over DNS over TLS and UDP", b.cfg.rounds, b.cfg.duration)
		b.tcpRounds(ctx, &res)
		b.logf("TCP callgrind pass")
		b.tcpCallgrindPass(ctx, &res)
	}
	if b.cfg.runs("memory") && ctx.Err() == nil {
		b.logf("skydns memory pass")
		b.memoryPass(ctx, &res)
	}
	if b.cfg.runs("forward") && ctx.Err() == nil {
		b.logf("forward: %d forwarding caches, %d rounds of %s of cache hits each", len(b.cfg.forwarders), b.cfg.rounds, b.cfg.duration)
		b.forwardPart(ctx, &res)
	}
	res.elapsed, res.busyAtEnd = time.Since(res.started), busyNote()
	return res
}

// markdown is the report printed and saved.
func (r results) markdown(cfg config, args []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# DNS benchmark results\n\n%s, %s. Command: `benchdns %s`\n\n", r.started.Format(time.RFC3339), r.elapsed.Round(time.Second), strings.Join(args, " "))
	fmt.Fprintf(&b, "Machine: %s; at the end: %s\n\n", r.machine, r.busyAtEnd)
	if !slices.ContainsFunc(cfg.parts, func(p string) bool { return slices.Contains(defaultParts, p) }) {
		return b.String() + r.forwardMarkdown(cfg) // the forward part alone
	}
	fmt.Fprintf(&b, "%d services (A + named-port SRV each) in etcd; queries 70 %% A, 10 %% SRV, 10 %% NXDOMAIN, 10 %% NODATA; "+
		"servers pinned to CPU %d (etcd too), dnsperf to CPU %d",
		cfg.services, cfg.serverCPU, cfg.loadCPU)
	udp := len(r.rows) > 0 && (cfg.runs("dns") || cfg.runs("callgrind"))
	if udp {
		fmt.Fprintf(&b, "; %d interleaved rounds of %s over UDP; callgrind: %d queries (%d for CoreDNS-etcd and its etcd), minus an idle window as long",
			cfg.rounds, cfg.duration, cfg.cgQueries, cfg.cgSlow)
	}
	b.WriteString(".\n\n")
	if udp {
		b.WriteString("## Serving\n\n" + report.DNSTable(r.rows) + "\n" + report.AnswersTable(r.rows) + "\n")
		if t := report.FloorTable(r.rows); t != "" {
			b.WriteString("## Against the kernel floor and Knot DNS\n\nCPU per query over the same runs, against the floor's (a fixed A answer with recvmmsg/sendmmsg, no lookup) and Knot DNS's; skydns-do is skydns with its zone signed, asked the same mix with the DO bit.\n\n" + t + "\n")
		}
		b.WriteString("## Targets\n\n" + report.TargetsTable(report.Targets(r.rows)) + "\n")
		if t := report.BreakdownTable(r.rows, callgrind.Categories); t != "" {
			b.WriteString("## Where the instructions go (callgrind, each function's own cost by source file)\n\n" + t + "\n")
		}
	}
	if cfg.runs("tcp") {
		b.WriteString(r.tcpMarkdown(cfg))
	}
	if r.profile != "" {
		fmt.Fprintf(&b, "## skydns CPU profile under load (go tool pprof -top)\n\n```\n%s\n```\n\n", r.profile)
	}
	if cfg.runs("memory") {
		b.WriteString(r.memoryMarkdown())
	}
	if cfg.runs("forward") {
		b.WriteString(r.forwardMarkdown(cfg))
	}
	return b.String()
}

func (r results) tcpMarkdown(cfg config) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Serving over TCP\n\nThe same data and queries; dnsperf -m tcp -c %d -q %d (%d connections kept open, %d queries in flight), "+
		"and skydns over DNS over TLS the same way (-m dot, its --tls-addr); "+
		"a warm-up pass over the query file, then %d interleaved rounds of %s per server, with one run of skydns over DNS over TLS and one over UDP in each round "+
		"(the UDP figures of the same machine moments); callgrind, skydns only: %d queries on one connection, %d in flight.\n\n", tcpClients, tcpOutstanding, tcpClients, tcpOutstanding,
		cfg.rounds, cfg.duration, cfg.cgQueries, 10)
	b.WriteString(report.TCPTable(r.tcp, r.tcpDoT, r.tcpUDP) + "\n")
	if p := report.TCPProblems(r.tcp, r.tcpDoT, r.tcpUDP); p != "" {
		b.WriteString(p + "\n")
	}
	b.WriteString("### Targets over TCP\n\n" + report.TargetsTable(report.TCPTargets(r.tcp, r.tcpUDP)) + "\n")
	return b.String()
}

func (r results) memoryMarkdown() string {
	var b strings.Builder
	b.WriteString("## skydns memory and apply rate\n\n" + report.MemoryTable(r.sizes) + "\n")
	if len(r.bursts) > 0 {
		b.WriteString(report.BurstTable(r.bursts) + "\n")
	}
	b.WriteString(report.VisibilityLine(r.visibility) + ".\n\n")
	b.WriteString(report.PublishLine(r.sizes) + "\n")
	return b.String()
}

// machineNote describes the machine, how busy it is, and the versions
// measured.
func (b *bench) machineNote(ctx context.Context) string {
	return strings.Join([]string{
		cpus(),
		"Linux " + firstLine(readFile("/proc/sys/kernel/osrelease")),
		busyNote(),
		version(ctx, b.cfg.skydns, "--version"),
		version(ctx, filepath.Join(b.cfg.bin, "coredns"), "-version"),
		version(ctx, "dnsmasq", "--version"),
		version(ctx, "dnsperf", "-h"),
		version(ctx, "valgrind", "--version"),
		runtime.Version(),
	}, "; ")
}

// busyNote is the load average and the CPU pressure: the share of time
// some runnable task waited for a CPU.
func busyNote() string {
	load := strings.Fields(readFile("/proc/loadavg"))
	note := "load average " + strings.Join(load[:min(3, len(load))], " ")
	if line := firstLine(readFile("/proc/pressure/cpu")); strings.HasPrefix(line, "some ") {
		note += ", CPU pressure " + strings.TrimPrefix(line, "some ")
	}
	return note
}

// cpus counts the machine's CPUs (not this process's affinity) and names
// their model.
func cpus() string {
	n, model := 0, "unknown model"
	for _, line := range strings.Split(readFile("/proc/cpuinfo"), "\n") {
		k, v, _ := strings.Cut(line, ":")
		switch strings.TrimSpace(k) {
		case "processor":
			n++
		case "model name":
			model = strings.TrimSpace(v)
		}
	}
	return fmt.Sprintf("%d CPUs (%s)", n, model)
}

func readFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return string(b)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// version returns the first line a command prints that names a version,
// or else its first line, prefixed with the command's name.
func version(ctx context.Context, cmd string, args ...string) string {
	out, _ := exec.CommandContext(ctx, cmd, args...).CombinedOutput()
	name := filepath.Base(cmd)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for _, line := range lines {
		if strings.Contains(strings.ToLower(line), "version") {
			return name + ": " + strings.TrimSpace(line)
		}
	}
	if lines[0] == "" {
		return name + ": version unknown"
	}
	return name + ": " + strings.TrimSpace(lines[0])
}

func writeResults(path, text string) error {
	if path == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(text), 0o644)
}
