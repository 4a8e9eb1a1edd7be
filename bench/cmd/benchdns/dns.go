package main

import (
	"context"
	"fmt"
	"time"

	"github.com/kubesky/kubesky/bench/dnsperf"
	"github.com/kubesky/kubesky/bench/proc"
	"github.com/kubesky/kubesky/bench/report"
)

// dnsRounds starts every server, then runs cfg.rounds interleaved rounds of
// one timed dnsperf run per server, rotating the order each round.
func (b *bench) dnsRounds(ctx context.Context, rows []report.Row, res *results) {
	insts := b.startAll(ctx, rows, nil)
	defer func() {
		for _, inst := range insts {
			inst.stop()
		}
	}()
	b.warmUpUDP(ctx, insts)
	for r := range b.cfg.rounds {
		for i := range rows {
			row := &rows[(i+r)%len(rows)]
			inst := insts[row.Server]
			if inst == nil || ctx.Err() != nil {
				continue
			}
			s, err := b.measure(ctx, inst, "udp")
			if err != nil {
				row.Problem = err.Error()
				continue
			}
			row.Samples = append(row.Samples, s)
			b.logf("round %d %-22s %8.0f QPS, %s CPU/query, p99 %s, lost %d", r+1, row.Server, s.QPS, s.CPUPerQuery, s.P99, s.Lost)
		}
	}
	if sky := insts[report.SkyDNS]; sky != nil && b.cfg.profile && ctx.Err() == nil {
		res.profile = b.profileSkyDNS(ctx, sky)
	}
}

// startAll starts each server once, with its opts; a server that fails
// to start gets its row's Problem and no instance.
func (b *bench) startAll(ctx context.Context, rows []report.Row, opts map[string]startOptions) map[string]*instance {
	insts := map[string]*instance{}
	for i := range rows {
		inst, err := b.startServer(ctx, serverNamed(rows[i].Server), opts[rows[i].Server])
		if err != nil {
			rows[i].Problem = "not serving: " + err.Error()
			b.logf("%s: %v", rows[i].Server, err)
			continue
		}
		insts[rows[i].Server] = inst
	}
	return insts
}

// warmUpUDP sends the servers that cache their answers the query file
// once over UDP, so that the timed rounds measure them warm.
func (b *bench) warmUpUDP(ctx context.Context, insts map[string]*instance) {
	for name, inst := range insts {
		if !inst.warmUp || ctx.Err() != nil {
			continue
		}
		run, err := dnsperf.Run(ctx, dnsperf.Options{Addr: inst.addr, QueryFile: b.queries, MaxRuns: 1, CPU: b.cfg.loadCPU, DNSSECOK: inst.dnssecOK})
		if err != nil {
			b.logf("warming %s up: %v", name, err)
			continue
		}
		b.logf("warmed %s up over UDP: %d queries answered, %d lost, %.0f QPS", name, run.Completed, run.Lost, run.QPS)
	}
}

// measure runs dnsperf once against inst, over mode's transport: "udp",
// or "tcp" or "dot" (DNS over TLS, at inst.tlsAddr) with tcpClients
// clients and tcpOutstanding queries in flight; and it reads the server's (and
// for servers reading etcd per query, etcd's) CPU time over the run.
func (b *bench) measure(ctx context.Context, inst *instance, mode string) (report.Sample, error) {
	return b.measureFile(ctx, inst, mode, b.queries)
}

// measureFile is measure with the queries of file.
func (b *bench) measureFile(ctx context.Context, inst *instance, mode, file string) (report.Sample, error) {
	before, err := b.cpuTimes(inst)
	if err != nil {
		return report.Sample{}, err
	}
	o := dnsperf.Options{Addr: inst.addr, QueryFile: file, Duration: b.cfg.duration, Verbose: true, CPU: b.cfg.loadCPU, DNSSECOK: inst.dnssecOK}
	if mode != "udp" {
		o.Mode, o.Clients, o.Outstanding = mode, tcpClients, tcpOutstanding
	}
	if mode == "dot" {
		o.Addr = inst.tlsAddr
	}
	run, err := dnsperf.Run(ctx, o)
	if err != nil {
		return report.Sample{}, err
	}
	after, err := b.cpuTimes(inst)
	if err != nil {
		return report.Sample{}, err
	}
	mem, err := proc.ReadMemory(inst.proc.PID())
	if err != nil {
		return report.Sample{}, err
	}
	return report.Sample{QPS: run.QPS, Avg: run.Avg, P99: run.P99, Completed: run.Completed, Lost: run.Lost,
		CPUPerQuery: perQuery(after[0]-before[0], run.Completed), EtcdCPUPerQuery: perQuery(after[1]-before[1], run.Completed),
		CPUBusy: busy(after[0]+after[1]-before[0]-before[1], run.RunTime),
		RSS:     mem.RSS, Rcodes: run.Rcodes, RunTime: run.RunTime}, nil
}

// cpuTimes returns the CPU time of inst and, if it reads etcd per query, of
// etcd (else zero).
func (b *bench) cpuTimes(inst *instance) ([2]time.Duration, error) {
	var t [2]time.Duration
	var err error
	cpuTime := proc.CPUTime
	if inst.processTree {
		cpuTime = proc.TreeCPUTime
	}
	if t[0], err = cpuTime(inst.proc.PID()); err != nil {
		return t, fmt.Errorf("%s: %w", inst.name, err)
	}
	if inst.readsEtcd {
		if t[1], err = proc.CPUTime(b.etcd.PID()); err != nil {
			return t, fmt.Errorf("etcd: %w", err)
		}
	}
	return t, nil
}

func perQuery(d time.Duration, queries int) time.Duration {
	if queries == 0 {
		return 0
	}
	return d / time.Duration(queries)
}

// busy is the share of the run time a CPU spent.
func busy(cpu, run time.Duration) float64 {
	if run <= 0 {
		return 0
	}
	return float64(cpu) / float64(run)
}
