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
	staleNames       = 1000 // names of TTL staleTTL, for the outage
	staleTTL         = 5 * time.Second
)

// externalName is the i-th name of the external zone.
func externalName(i int) string { return fmt.Sprintf("n%07d.%s", i, externalZone) }

// forwardRow is one forwarder's figures.
type forwardRow = report.ForwardRow

// forwardPart runs the forward part: start the upstream behind the link,
// then every forwarder; warm each with the warm set and read its RSS;
// interleaved rounds of cache hits, then the hit mix at half of each
// one's saturation; skydns's search-path workload; per forwarder, runs of
// misses at a fixed rate at each upstream latency and a storm of one new
// name; last, the upstream outage, every forwarder at once.
func (b *bench) forwardPart(ctx context.Context, res *results) {
	up, err := b.startUpstream(ctx)
	if err != nil {
		b.logf("forward: %v", err)
		res.forwardProblem = err.Error()
		return
	}
	defer up.Stop(10 * time.Second)
	b.up = up
	if b.link, err = startLink(up.addr); err != nil {
		res.forwardProblem = "the link to the upstream: " + err.Error()
		return
	}
	defer b.link.close()
	b.upstream = b.link.addr()
	warm, zipf, err := b.forwardQueryFiles()
	if err != nil {
		res.forwardProblem = err.Error()
		return
	}
	rows, insts := b.startForwarders(ctx, warm)
	defer func() {
		for _, inst := range insts {
			inst.stop()
		}
	}()
	b.hitRounds(ctx, rows, insts, zipf)
	if sky := insts["skydns"]; sky != nil && ctx.Err() == nil {
		if b.cfg.profile {
			res.forwardProfile = b.profileUnder(ctx, sky, zipf, "skydns-forward.cpu.pprof")
		}
		res.searchPath, res.searchProfile, res.searchProblem = b.searchPathPart(ctx, sky, warm, zipf)
	}
	next := forwardWarmNames
	for _, row := range rows {
		if inst := insts[row.Server]; inst != nil && ctx.Err() == nil {
			for _, latency := range b.cfg.missLatencies {
				next = b.missRun(ctx, inst, row, next, latency)
			}
			b.storm(ctx, inst, row, next)
			next++
		}
	}
	if b.cfg.outage > 0 && ctx.Err() == nil {
		b.outagePart(ctx, rows, insts, next)
	}
	for _, row := range rows {
		res.forward = append(res.forward, *row)
	}
}

// startForwarders starts every forwarder of the flags and warms it up;
// insts holds those serving.
func (b *bench) startForwarders(ctx context.Context, warm string) ([]*forwardRow, map[string]*instance) {
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
		insts[name] = inst
		rows[i].Outage.ServeStale = inst.serveStale
		b.warmForwarder(ctx, inst, rows[i], warm)
	}
	return rows, insts
}

// hitRounds runs the interleaved rounds of the cache-hit mix, then the
// mix at half of each forwarder's saturation QPS.
func (b *bench) hitRounds(ctx context.Context, rows []*forwardRow, insts map[string]*instance, zipf string) {
	for r := range b.cfg.rounds {
		for i := range rows {
			row := rows[(i+r)%len(rows)]
			if inst := insts[row.Server]; inst != nil && ctx.Err() == nil {
				b.hitRun(ctx, inst, row, zipf, r)
			}
		}
	}
	for _, row := range rows {
		if inst := insts[row.Server]; inst != nil && ctx.Err() == nil && row.QPS() >= 2 {
			b.halfRun(ctx, inst, row, zipf)
		}
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
	for i := range staleNames {
		fmt.Fprintf(bw, "%s %d A 10.255.%d.%d\n", strings.TrimSuffix(staleName(i), "."+externalZone), int(staleTTL.Seconds()), byte(i>>8), byte(i))
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
// name first on, at cfg.missRate queries a second for cfg.duration, with
// latency added to each upstream round trip, and counts the upstream
// queries they cost. It returns the next name unused.
func (b *bench) missRun(ctx context.Context, inst *instance, row *forwardRow, first int, latency time.Duration) int {
	n := b.cfg.missRate * int(b.cfg.duration/time.Second)
	if first+n > b.cfg.externalNames {
		row.Notes = append(row.Notes, "misses not run: the external zone has too few names left")
		return first
	}
	file := filepath.Join(b.work, fmt.Sprintf("forward-miss-%s-%d", inst.name, first))
	if err := gendata.WriteFile(file, func(w io.Writer) error { return writeNames(w, first, first+n) }); err != nil {
		row.Problem = err.Error()
		return first
	}
	b.link.setDelay(latency)
	defer b.link.setDelay(0)
	before, _ := b.up.received(ctx)
	run, err := dnsperf.Run(ctx, dnsperf.Options{Addr: inst.addr, QueryFile: file, MaxRuns: 1, MaxQPS: b.cfg.missRate, Verbose: true, CPU: b.cfg.loadCPU})
	if err != nil {
		row.Problem = "misses: " + err.Error()
		return first + n
	}
	after, _ := b.up.received(ctx)
	m := report.Misses{Latency: latency, Rate: b.cfg.missRate, P50: run.P50, P99: run.P99, Completed: run.Completed, Lost: run.Lost}
	if sent := run.Completed + run.Lost; sent > 0 {
		m.Upstream = float64(after-before) / float64(sent)
	}
	row.Misses = append(row.Misses, m)
	b.logf("%-18s misses at %d/s, upstream +%s: p50 %s p99 %s lost %d, %.2f upstream queries each", inst.name, b.cfg.missRate, latency, run.P50, run.P99, run.Lost, m.Upstream)
	return first + n
}

// halfRun sends the cache-hit mix at half of the median saturation QPS
// and keeps the latencies.
func (b *bench) halfRun(ctx context.Context, inst *instance, row *forwardRow, zipf string) {
	rate := int(row.QPS() / 2)
	run, err := dnsperf.Run(ctx, dnsperf.Options{Addr: inst.addr, QueryFile: zipf, Duration: b.cfg.duration, MaxQPS: rate, Verbose: true, CPU: b.cfg.loadCPU})
	if err != nil {
		row.Problem = "half of saturation: " + err.Error()
		return
	}
	row.Half = report.Misses{Rate: rate, P50: run.P50, P99: run.P99, Completed: run.Completed, Lost: run.Lost}
	b.logf("%-18s cache hits at %d/s: p50 %s p99 %s lost %d", inst.name, rate, run.P50, run.P99, run.Lost)
}

func (r results) forwardMarkdown(cfg config) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Forwarding caches\n\nEvery server forwards all names to one Knot DNS on CPU %d holding %s with %d names (TTL %d s) and %d names of TTL %s, which counts the queries it receives; "+
		"the forwarders reach it through a UDP relay on 127.0.0.1 in the bench's process (the link), which adds the upstream latency or, during the outage, drops every query. "+
		"Cache hits: the %d-name warm set asked twice, then %d interleaved rounds of %s of a Zipf mix (s = 1.1) over it, then the mix for %s at half of each server's median QPS; RSS per cached name is what the warm set added. "+
		"Misses: names never asked, %d a second for %s, at each upstream latency. Storm: %d clients, each from its own socket, ask one new name at once.\n\n",
		cfg.loadCPU, externalZone, cfg.externalNames, externalTTL, staleNames, staleTTL, forwardWarmNames, cfg.rounds, cfg.duration, cfg.duration, cfg.missRate, cfg.duration, stormClients)
	if r.forwardProblem != "" {
		b.WriteString("Not run: " + r.forwardProblem + "\n\n")
		return b.String()
	}
	b.WriteString("### Cache hits\n\n" + report.HitsTable(r.forward) + "\n")
	b.WriteString("### Misses and the storm\n\n" + report.MissesTable(r.forward, stormClients) + "\n")
	if cfg.outage > 0 {
		fmt.Fprintf(&b, "### Upstream outage\n\n%s\n\n%s\n", outageMethod(cfg), report.OutageTable(r.forward))
	}
	b.WriteString(r.searchPathMarkdown())
	b.WriteString("### Targets among the forwarding caches\n\n" + report.TargetsTable(append(report.ForwardTargets(r.forward, "skydns", "unbound", staleLimit), r.searchTargets()...)) + "\n")
	if r.forwardProfile != "" {
		fmt.Fprintf(&b, "### skydns CPU profile under the cache-hit mix (go tool pprof -top)\n\n```\n%s\n```\n\n", r.forwardProfile)
	}
	return b.String()
}
