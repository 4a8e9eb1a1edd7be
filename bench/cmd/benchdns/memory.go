package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"time"

	"github.com/kubesky/kubesky/bench/dnsperf"
	"github.com/kubesky/kubesky/bench/gendata"
	"github.com/kubesky/kubesky/bench/proc"
	"github.com/kubesky/kubesky/bench/report"
)

// memoryRun is the duration of the dnsperf run before memory is read.
const memoryRun = 3 * time.Second

// memoryPass measures skydns's memory at each size (loading more services
// into etcd as it goes), and at the largest its apply rate and its
// write → answer latency.
func (b *bench) memoryPass(ctx context.Context, res *results) {
	sizes := slices.Sorted(slices.Values(b.cfg.memSizes))
	for i, n := range sizes {
		if ctx.Err() != nil {
			return
		}
		last := i == len(sizes)-1
		res.sizes = append(res.sizes, b.memoryAt(ctx, n, last, res))
	}
}

// memoryAt loads n services, starts a fresh skydns, times its sync, loads
// it with queries and reads its memory; CoreDNS-etcd gets the same queries.
func (b *bench) memoryAt(ctx context.Context, n int, last bool, res *results) report.MemorySize {
	size := report.MemorySize{Services: n}
	if n > 0 && n < b.loaded {
		size.Problem = fmt.Sprintf("etcd holds %d services already", b.loaded)
		return size
	}
	if err := b.loadUpTo(ctx, n); err != nil {
		size.Problem = err.Error()
		return size
	}
	queries, err := b.sizeData(n, &size)
	if err != nil {
		size.Problem = err.Error()
		return size
	}
	inst, err := b.measureSkyDNS(ctx, n, queries, &size)
	if err != nil {
		size.Problem = err.Error()
		return size
	}
	defer inst.stop()
	if n > 0 {
		size.CoreDNSRSS = b.corednsRSS(ctx, queries)
	}
	if last && n > 0 {
		res.bursts = b.bursts(ctx, inst)
		res.visibility = b.visibility(ctx, inst, n)
	}
	return size
}

// sizeData fills the key counts of size and writes its query file (the
// main one for the base, whose skydns serves nothing).
func (b *bench) sizeData(n int, size *report.MemorySize) (string, error) {
	if n == 0 {
		return b.queries, nil
	}
	spec := b.spec
	spec.Services = n
	svcs := gendata.Generate(spec)
	kvs := gendata.Records(spec, svcs)
	size.Keys, size.RawBytes = len(kvs), int64(gendata.RawBytes(kvs))
	path := filepath.Join(b.work, fmt.Sprintf("queries.size.%d", n))
	qs := gendata.Queries(spec, svcs, 100000, 2)
	return path, gendata.WriteFile(path, func(w io.Writer) error { return gendata.WriteQueries(w, qs) })
}

// measureSkyDNS starts skydns (for the base, on a prefix holding nothing),
// times its sync to etcd's current revision, runs queries and reads its
// memory.
func (b *bench) measureSkyDNS(ctx context.Context, n int, queries string, size *report.MemorySize) (*instance, error) {
	o := startOptions{ready: atRevision(b.rev)}
	if n == 0 {
		o.extra = []string{"--prefix", "/skydns-empty"}
	}
	start := time.Now()
	inst, err := b.startServer(ctx, serverNamed(report.SkyDNS), o)
	if err != nil {
		return nil, err
	}
	size.Sync = time.Since(start)
	if err := b.loadAndReadMemory(ctx, inst, queries, size); err != nil {
		inst.stop()
		return nil, err
	}
	b.logf("memory: %d services, skydns synced in %s, RSS %.1f MB", n, size.Sync.Round(time.Millisecond), float64(size.RSS)/(1<<20))
	return inst, nil
}

// loadAndReadMemory runs dnsperf briefly against skydns and reads its
// resident memory, its Go heap and the time it took to publish its list.
func (b *bench) loadAndReadMemory(ctx context.Context, inst *instance, queries string, size *report.MemorySize) error {
	mem, err := b.afterLoad(ctx, inst, queries)
	if err != nil {
		return err
	}
	size.RSS, size.Peak = mem.RSS, mem.Peak
	heap, err := metric(ctx, "http://"+inst.httpAddr+"/metrics", "go_memstats_heap_inuse_bytes")
	if err != nil {
		return err
	}
	size.HeapInuse = int64(heap)
	stats, err := readApplyStats(ctx, inst)
	if err != nil {
		return err
	}
	size.ListPublish = stats.listPublish()
	return nil
}

// afterLoad runs dnsperf for memoryRun against inst and reads its memory.
func (b *bench) afterLoad(ctx context.Context, inst *instance, queries string) (proc.Memory, error) {
	_, err := dnsperf.Run(ctx, dnsperf.Options{Addr: inst.addr, QueryFile: queries, Duration: memoryRun, CPU: b.cfg.loadCPU})
	if err != nil {
		return proc.Memory{}, err
	}
	return proc.ReadMemory(inst.proc.PID())
}

// corednsRSS is CoreDNS-etcd's resident memory after the same queries; 0
// when it could not be measured.
func (b *bench) corednsRSS(ctx context.Context, queries string) int64 {
	inst, err := b.startServer(ctx, serverNamed(report.CoreDNS), startOptions{})
	if err != nil {
		b.logf("memory: coredns: %v", err)
		return 0
	}
	defer inst.stop()
	mem, err := b.afterLoad(ctx, inst, queries)
	if err != nil {
		b.logf("memory: coredns: %v", err)
	}
	return mem.RSS
}
