package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kubesky/kubesky/bench/dnsperf"
	"github.com/kubesky/kubesky/bench/gendata"
	"github.com/kubesky/kubesky/bench/proc"
	"github.com/kubesky/kubesky/bench/report"
	"github.com/kubesky/kubesky/internal/kubeproc"
)

// The forward part: every forwarder (forwarders.go) forwards to one Knot
// DNS on the load CPU, which holds the external zone and counts the
// queries it receives (mod-stats).
const (
	externalZone     = "ext."
	externalTTL      = 3600 // longer than the part: warm names stay cached
	forwardWarmNames = 100000
	zipfQueries      = 500000
	stormClients     = 1000
)

// externalName is the i-th name of the external zone.
func externalName(i int) string { return fmt.Sprintf("n%07d.%s", i, externalZone) }

// forwardRow is one forwarder's figures.
type forwardRow = report.ForwardRow

// forwardPart runs the forward part: start the upstream, then every
// forwarder; warm each with the warm set and read its RSS; interleaved
// rounds of cache hits; then per forwarder a run of misses at a fixed
// rate and a storm of one new name.
func (b *bench) forwardPart(ctx context.Context, res *results) {
	up, err := b.startUpstream(ctx)
	if err != nil {
		b.logf("forward: %v", err)
		res.forwardProblem = err.Error()
		return
	}
	defer up.Stop(10 * time.Second)
	b.up = up
	warm, zipf, err := b.forwardQueryFiles()
	if err != nil {
		res.forwardProblem = err.Error()
		return
	}
	rows := make([]*forwardRow, len(b.cfg.forwarders))
	insts := map[string]*instance{}
	for i, name := range b.cfg.forwarders {
		rows[i] = &forwardRow{Row: report.Row{Server: name}}
		inst, err := b.startServer(ctx, forwarderNamed(name), startOptions{ready: answersExternal})
		if err != nil {
			rows[i].Problem = "not serving: " + err.Error()
			b.logf("%s: %v", name, err)
			continue
		}
		defer inst.stop()
		insts[name] = inst
		b.warmForwarder(ctx, inst, rows[i], warm)
	}
	for r := range b.cfg.rounds {
		for i := range rows {
			row := rows[(i+r)%len(rows)]
			if inst := insts[row.Server]; inst != nil && ctx.Err() == nil {
				b.hitRun(ctx, inst, row, zipf, r)
			}
		}
	}
	if sky := insts["skydns"]; sky != nil && b.cfg.profile && ctx.Err() == nil {
		res.forwardProfile = b.profileUnder(ctx, sky, zipf, "skydns-forward.cpu.pprof")
	}
	next := forwardWarmNames
	for _, row := range rows {
		if inst := insts[row.Server]; inst != nil && ctx.Err() == nil {
			next = b.missRun(ctx, inst, row, next)
			b.storm(ctx, inst, row, next)
			next++
		}
	}
	for _, row := range rows {
		res.forward = append(res.forward, *row)
	}
}

// answersExternal waits until inst answers the external zone's first name.
func answersExternal(ctx context.Context, inst *instance, timeout time.Duration) error {
	return poll(ctx, inst.proc, timeout, func() error { return answers(inst.addr, externalName(0), 300*time.Millisecond) })
}

// upstream is the running Knot DNS holding the external zone.
type upstream struct {
	*kubeproc.Process
	conf string // its configuration file, for knotc
	addr string
}

// startUpstream writes the external zone and starts Knot DNS on the load
// CPU, so that the forwarders' CPU is theirs alone.
func (b *bench) startUpstream(ctx context.Context) (*upstream, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(b.work, "upstream")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	zoneFile := filepath.Join(dir, "ext.zone")
	start := time.Now()
	if err := gendata.WriteFile(zoneFile, func(w io.Writer) error { return writeExternalZone(w, b.cfg.externalNames) }); err != nil {
		return nil, err
	}
	conf, err := writeConfig(dir, "knot.conf", upstreamConf(dir, zoneFile, port))
	if err != nil {
		return nil, err
	}
	argv := proc.Pin(b.cfg.loadCPU, []string{"knotd", "--config", conf})
	p, err := kubeproc.Start(kubeproc.Spec{Name: "upstream", Path: argv[0], Args: argv[1:], Log: filepath.Join(dir, "knot.log")})
	if err != nil {
		return nil, err
	}
	u := &upstream{Process: p, conf: conf, addr: addr(port)}
	if err := poll(ctx, p, 5*time.Minute, func() error { return answers(u.addr, externalName(0), 300*time.Millisecond) }); err != nil {
		p.Kill()
		return nil, fmt.Errorf("upstream: %w", err)
	}
	b.upstream = u.addr
	b.logf("upstream Knot DNS on %s: %d names in %s, loaded in %s", u.addr, b.cfg.externalNames, externalZone, time.Since(start).Round(time.Second))
	return u, nil
}

// writeExternalZone writes the external zone: n names with one A record each.
func writeExternalZone(w io.Writer, n int) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "$ORIGIN %s\n$TTL %d\n@ SOA ns.%s hostmaster.%s 1 3600 600 86400 60\n@ NS ns.%s\nns A 127.0.0.1\n",
		externalZone, externalTTL, externalZone, externalZone, externalZone)
	for i := range n {
		fmt.Fprintf(bw, "n%07d A 10.%d.%d.%d\n", i, byte(i>>16), byte(i>>8), byte(i))
	}
	return bw.Flush()
}

func upstreamConf(dir, zoneFile string, port int) string {
	return fmt.Sprintf(`server:
    rundir: "%[1]s"
    listen: 127.0.0.1@%[3]d
    udp-workers: 1
    tcp-workers: 1
    background-workers: 1
control:
    listen: "%[1]s/knot.sock"
database:
    storage: "%[1]s"
log:
  - target: stderr
    any: warning
mod-stats:
  - id: count
    request-protocol: on
    server-operation: off
    request-bytes: off
    response-bytes: off
    edns-presence: off
    flag-presence: off
    response-code: off
    reply-nodata: off
    query-type: off
    query-size: off
    reply-size: off
template:
  - id: default
    global-module: mod-stats/count
zone:
  - domain: %[4]s
    file: "%[2]s"
    journal-content: none
    zonefile-sync: -1
    zonefile-load: whole
    semantic-checks: off
`, dir, zoneFile, port, externalZone)
}

// received is how many queries the upstream has received, over every
// transport (knotc stats).
func (u *upstream) received(ctx context.Context) (int, error) {
	out, err := exec.CommandContext(ctx, "knotc", "-c", u.conf, "stats", "mod-stats.request-protocol").Output()
	if err != nil {
		return 0, fmt.Errorf("knotc stats: %w", err)
	}
	return sumCounters(string(out))
}

// sumCounters adds the values of knotc's "name = value" lines.
func sumCounters(text string) (int, error) {
	total := 0
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		_, value, ok := strings.Cut(line, " = ")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(value))
		if err != nil {
			return 0, fmt.Errorf("knotc stats line %q: %w", line, err)
		}
		total += n
	}
	return total, nil
}

// forwardQueryFiles writes the warm set (each name once) and the cache-hit
// mix: Zipf (s = 1.1) over the warm set, seeded so every run sends the
// same queries.
func (b *bench) forwardQueryFiles() (warm, zipf string, err error) {
	warm, zipf = filepath.Join(b.work, "forward-warm"), filepath.Join(b.work, "forward-zipf")
	err = gendata.WriteFile(warm, func(w io.Writer) error { return writeNames(w, 0, forwardWarmNames) })
	if err != nil {
		return "", "", err
	}
	z := rand.NewZipf(rand.New(rand.NewPCG(1, 2)), 1.1, 1, forwardWarmNames-1)
	err = gendata.WriteFile(zipf, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		for range zipfQueries {
			fmt.Fprintf(bw, "%s A\n", externalName(int(z.Uint64())))
		}
		return bw.Flush()
	})
	return warm, zipf, err
}

// writeNames writes query lines for the names [from, to).
func writeNames(w io.Writer, from, to int) error {
	bw := bufio.NewWriter(w)
	for i := from; i < to; i++ {
		fmt.Fprintf(bw, "%s A\n", externalName(i))
	}
	return bw.Flush()
}

// warmForwarder asks inst every name of the warm set twice (the second
// pass caches what the first lost) and reads the RSS it grew by.
func (b *bench) warmForwarder(ctx context.Context, inst *instance, row *forwardRow, warm string) {
	before, err := proc.ReadMemory(inst.proc.PID())
	if err != nil {
		row.Problem = err.Error()
		return
	}
	for pass := range 2 {
		run, err := dnsperf.Run(ctx, dnsperf.Options{Addr: inst.addr, QueryFile: warm, MaxRuns: 1, CPU: b.cfg.loadCPU, Timeout: 2 * time.Second})
		if err != nil {
			row.Problem = "warming up: " + err.Error()
			return
		}
		if pass == 1 {
			row.WarmLost = run.Lost
		}
		b.logf("warmed %s up, pass %d: %d answered, %d lost, %.0f QPS", inst.name, pass+1, run.Completed, run.Lost, run.QPS)
	}
	after, err := proc.ReadMemory(inst.proc.PID())
	if err != nil {
		row.Problem = err.Error()
		return
	}
	row.RSSPerEntry = float64(after.RSS-before.RSS) / forwardWarmNames
}

// hitRun is one timed run of the cache-hit mix.
func (b *bench) hitRun(ctx context.Context, inst *instance, row *forwardRow, zipf string, round int) {
	s, err := b.measureFile(ctx, inst, "udp", zipf)
	if err != nil {
		row.Problem = err.Error()
		return
	}
	row.Samples = append(row.Samples, s)
	b.logf("round %d %-18s cache hits %8.0f QPS, %s CPU/answer, p99 %s, lost %d", round+1, row.Server, s.QPS, s.CPUPerQuery, s.P99, s.Lost)
}

// missRun asks inst names never asked before, from the external zone's
// name first on, at cfg.missRate queries a second for cfg.duration, and
// counts the upstream queries they cost. It returns the next name unused.
func (b *bench) missRun(ctx context.Context, inst *instance, row *forwardRow, first int) int {
	n := b.cfg.missRate * int(b.cfg.duration/time.Second)
	if first+n > b.cfg.externalNames {
		row.Notes = append(row.Notes, "misses not run: the external zone has too few names left")
		return first
	}
	file := filepath.Join(b.work, fmt.Sprintf("forward-miss-%s", inst.name))
	if err := gendata.WriteFile(file, func(w io.Writer) error { return writeNames(w, first, first+n) }); err != nil {
		row.Problem = err.Error()
		return first
	}
	before, _ := b.up.received(ctx)
	run, err := dnsperf.Run(ctx, dnsperf.Options{Addr: inst.addr, QueryFile: file, MaxRuns: 1, MaxQPS: b.cfg.missRate, Verbose: true, CPU: b.cfg.loadCPU})
	if err != nil {
		row.Problem = "misses: " + err.Error()
		return first + n
	}
	after, _ := b.up.received(ctx)
	row.Misses = report.Misses{P50: run.P50, P99: run.P99, Completed: run.Completed, Lost: run.Lost}
	if sent := run.Completed + run.Lost; sent > 0 {
		row.Misses.Upstream = float64(after-before) / float64(sent)
	}
	b.logf("%-18s misses at %d/s: p50 %s p99 %s lost %d, %.2f upstream queries each", inst.name, b.cfg.missRate, run.P50, run.P99, run.Lost, row.Misses.Upstream)
	return first + n
}

func (r results) forwardMarkdown(cfg config) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Forwarding caches\n\nEvery server forwards all names to one Knot DNS on CPU %d holding %s with %d names (TTL %d s), which counts the queries it receives. "+
		"Cache hits: the %d-name warm set asked twice, then %d interleaved rounds of %s of a Zipf mix (s = 1.1) over it; RSS per cached name is what the warm set added. "+
		"Misses: names never asked, %d a second for %s. Storm: %d clients, each from its own socket, ask one new name at once.\n\n",
		cfg.loadCPU, externalZone, cfg.externalNames, externalTTL, forwardWarmNames, cfg.rounds, cfg.duration, cfg.missRate, cfg.duration, stormClients)
	if r.forwardProblem != "" {
		b.WriteString("Not run: " + r.forwardProblem + "\n\n")
		return b.String()
	}
	b.WriteString(report.ForwardTable(r.forward, stormClients) + "\n\n")
	b.WriteString("### Targets among the forwarding caches\n\n" + report.TargetsTable(report.ForwardTargets(r.forward, "skydns", "unbound")) + "\n")
	if r.forwardProfile != "" {
		fmt.Fprintf(&b, "### skydns CPU profile under the cache-hit mix (go tool pprof -top)\n\n```\n%s\n```\n\n", r.forwardProfile)
	}
	return b.String()
}
