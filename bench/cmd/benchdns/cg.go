package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kubesky/kubesky/bench/callgrind"
	"github.com/kubesky/kubesky/bench/dnsperf"
	"github.com/kubesky/kubesky/bench/report"
)

// callgrindPass counts instructions per query for every server but the
// cached CoreDNS (its cost depends on the hit rate, not on code), and for
// etcd behind CoreDNS-etcd.
func (b *bench) callgrindPass(ctx context.Context, rows []report.Row) {
	fast, err := b.firstLines(b.cfg.cgQueries)
	if err != nil {
		b.logf("callgrind: %v", err)
		return
	}
	slow, err := b.firstLines(b.cfg.cgSlow)
	if err != nil {
		b.logf("callgrind: %v", err)
		return
	}
	for i := range rows {
		row := &rows[i]
		s := serverNamed(row.Server)
		if s.name == report.CoreDNSCache || ctx.Err() != nil {
			continue
		}
		if s.noCallgrind != "" {
			row.Notes = append(row.Notes, s.noCallgrind)
			continue
		}
		file := fast
		if s.readsEtcd {
			file = slow
		}
		b.countInto(row, "", func() (float64, error) { return b.countServer(ctx, s, file, row, false) })
		if s.readsEtcd {
			b.countInto(row, "etcd ", func() (float64, error) { return b.countEtcd(ctx, s, slow) })
		}
	}
}

// countInto runs count, a second time if the first fails (valgrind
// sometimes crashes on a Go program), and stores its result in row (etcd's
// when what is "etcd "), or notes its error.
func (b *bench) countInto(row *report.Row, what string, count func() (float64, error)) {
	n, err := count()
	if err != nil {
		b.logf("%s callgrind %sfailed, trying once more: %v", row.Server, what, err)
		n, err = count()
	}
	if err != nil {
		row.Problem = fmt.Sprintf("callgrind %s%v", what, err)
		b.logf("%s callgrind %sfailed: %v", row.Server, what, err)
		return
	}
	if what == "" {
		row.Instr = n
	} else {
		row.EtcdInstr = n
	}
	b.logf("%-22s %s%.0f instructions/query", row.Server, what, n)
}

// countServer starts s under callgrind and counts its instructions per
// query, and where they go into row.Breakdown. A server that answers from
// memory gets the queries twice: the first window counts each query asked
// for the first time (row.FirstInstr: caches cold), the second the same
// queries asked again, the steady state a timed dnsperf run sees, where
// its query file repeats. CoreDNS-etcd reads etcd every time: one window.
// The queries go over TCP (one connection) or UDP.
func (b *bench) countServer(ctx context.Context, s server, queries string, row *report.Row, tcp bool) (float64, error) {
	out := cleanDumps(filepath.Join(b.work, "callgrind."+s.name+"."+proto(tcp)))
	inst, err := b.startServer(ctx, s, startOptions{cgOut: out})
	if err != nil {
		return 0, err
	}
	defer inst.proc.Kill() // a signal would trip callgrind; the counts are dumped already
	dump := 1
	if !s.readsEtcd {
		first, err := b.countWindow(ctx, inst.proc.PID(), out, dump, inst.addr, queries, tcp, s.dnssecOK)
		if err != nil {
			return 0, err
		}
		row.FirstInstr, dump = first.perQuery(), dump+2
	}
	gc := gcCounter{}
	if s.pprof {
		gc.url = "http://" + inst.httpAddr
	}
	if err := gc.start(ctx); err != nil {
		return 0, err
	}
	w, err := b.countWindow(ctx, inst.proc.PID(), out, dump, inst.addr, queries, tcp, s.dnssecOK)
	if err != nil {
		return 0, err
	}
	if note := gc.note(ctx); note != "" {
		row.Notes = append(row.Notes, note)
	}
	if s.goRuntime {
		row.Breakdown = breakdown(fmt.Sprintf("%s.%d", out, dump), w.completed)
	}
	return w.perQuery(), nil
}

// breakdown is a dump's instructions by category, per query; nil when the
// dump cannot be read.
func breakdown(path string, queries int) map[string]float64 {
	sums, err := callgrind.Breakdown(path)
	if err != nil {
		return nil
	}
	out := map[string]float64{}
	for cat, n := range sums {
		out[cat] = float64(n) / float64(queries)
	}
	return out
}

// countEtcd restarts etcd under callgrind, serves s natively in front of
// it, and counts etcd's instructions per query; then restarts etcd
// natively.
func (b *bench) countEtcd(ctx context.Context, s server, queries string) (float64, error) {
	out := cleanDumps(filepath.Join(b.work, "callgrind.etcd"))
	b.etcd.Stop(10 * time.Second)
	defer b.restartEtcd(ctx)
	if err := b.startEtcd(ctx, func(argv []string) []string { return callgrind.Command(out, argv...) }); err != nil {
		return 0, err
	}
	inst, err := b.startServer(ctx, s, startOptions{})
	if err != nil {
		return 0, err
	}
	defer inst.stop()
	w, err := b.countWindow(ctx, b.etcd.PID(), out, 1, inst.addr, queries, false, false)
	return w.perQuery(), err
}

func (b *bench) restartEtcd(ctx context.Context) {
	b.etcd.Kill()
	if err := b.startEtcd(ctx, nil); err != nil {
		b.logf("restarting etcd: %v", err)
	}
}

// cleanDumps removes the dumps of an earlier attempt, whose parts would be
// read as this one's, and returns out.
func cleanDumps(out string) string {
	old, _ := filepath.Glob(out + "*")
	for _, f := range old {
		os.Remove(f)
	}
	return out
}

// window is the instruction counts of one callgrind measurement.
type window struct {
	busy, idle uint64
	completed  int
}

// perQuery is the busy window's instructions less the idle window's
// (timers, background work, callgrind_control itself), per answered query.
func (w window) perQuery() float64 {
	if w.completed == 0 {
		return 0
	}
	return (float64(w.busy) - float64(w.idle)) / float64(w.completed)
}

// countWindow zeroes the counters of the callgrind process pid, sends the
// queries, dumps to out.dump; then stays idle as long and dumps again, to
// out.dump+1. The queries go over TCP (one connection) or UDP, with the
// DO bit when do is set.
func (b *bench) countWindow(ctx context.Context, pid int, out string, dump int, addr, queries string, tcp, do bool) (window, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	if err := callgrind.Zero(ctx, pid); err != nil {
		return window{}, err
	}
	start := time.Now()
	run, err := dnsperf.Run(ctx, dnsperf.Options{Addr: addr, QueryFile: queries, MaxRuns: 1, Outstanding: 10,
		Timeout: 10 * time.Second, CPU: b.cfg.loadCPU, Mode: proto(tcp), DNSSECOK: do})
	if err != nil {
		return window{}, err
	}
	elapsed := time.Since(start)
	w := window{completed: run.Completed}
	if w.busy, err = callgrind.Dump(ctx, pid, out, dump); err != nil {
		return w, err
	}
	select {
	case <-time.After(elapsed):
	case <-ctx.Done():
		return w, ctx.Err()
	}
	if w.idle, err = callgrind.Dump(ctx, pid, out, dump+1); err != nil {
		return w, err
	}
	b.logf("callgrind: %d queries answered (%d lost) in %s: %d instructions, %d in as long idle", run.Completed, run.Lost, elapsed.Round(time.Millisecond), w.busy, w.idle)
	if run.Completed == 0 {
		return w, fmt.Errorf("no query answered under callgrind")
	}
	return w, nil
}

// gcCounter makes a callgrind window of a Go server with pprof start
// right after a garbage collection, and counts the collections in it: a
// big heap is collected rarely, so whether a window holds one or two
// cycles would otherwise be chance.
type gcCounter struct {
	url    string // the server's HTTP base URL; "" does nothing
	before float64
}

func (g *gcCounter) start(ctx context.Context) error {
	if g.url == "" {
		return nil
	}
	if err := fetch(ctx, g.url+"/debug/pprof/heap?gc=1", "/dev/null"); err != nil {
		return fmt.Errorf("forcing a GC: %w", err)
	}
	n, err := metric(ctx, g.url+"/metrics", "go_gc_duration_seconds_count")
	g.before = n
	return err
}

// note says how many collections ran since start.
func (g *gcCounter) note(ctx context.Context) string {
	if g.url == "" {
		return ""
	}
	n, err := metric(ctx, g.url+"/metrics", "go_gc_duration_seconds_count")
	if err != nil {
		return "GC cycles in the callgrind window: unknown (" + err.Error() + ")"
	}
	return fmt.Sprintf("callgrind window started after a forced GC and held %.0f more", n-g.before)
}
