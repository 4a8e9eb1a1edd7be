package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/client-go/kubernetes"

	"github.com/kubesky/kubesky/bench/proc"
	"github.com/kubesky/kubesky/integration/harness"
)

// The targets of kube2sky at scale.
const (
	syncTarget       = 10 * time.Second
	churnP50Target   = 5 * time.Millisecond
	churnP99Target   = 50 * time.Millisecond
	scaleReadyBudget = 5 * time.Minute // how long kube2sky may take to become ready at all
)

// Series of kube2sky's /metrics the benchmark reads.
const (
	metricWritten   = "kube2sky_records_written_total"
	metricDeleted   = "kube2sky_records_deleted_total"
	metricTxns      = "kube2sky_etcd_txns_total"
	metricFullCount = `kube2sky_reconcile_duration_seconds_count{scope="full"}`
	metricFullSum   = `kube2sky_reconcile_duration_seconds_sum{scope="full"}`

	metricProgramming   = "kube2sky_dns_programming_latency_seconds"
	metricReconcile     = "kube2sky_reconcile_duration_seconds"
	metricGCCount       = "go_gc_duration_seconds_count"
	metricHeapInUse     = "go_memstats_heap_inuse_bytes"
	metricEtcdCommit    = "etcd_disk_backend_commit_duration_seconds"
	metricEtcdSlowApply = "etcd_server_slow_apply_total"
	metricPublishCount  = `skydns_snapshot_publish_seconds_count{update="watch"}`
	metricPublishSum    = `skydns_snapshot_publish_seconds_sum{update="watch"}`
)

// BenchmarkKube2SkyAtScale measures kube2sky through the real kube-apiserver
// ("kube2sky at scale"): the initial sync of 10k headless Services
// with 50k endpoints, a steady resync, and 100 changes a second for 60 s
// seen through skydns. It runs once whatever b.N is, prints one Markdown
// table per part and writes them to bench/results/kube2sky.md. The sizes
// come from KUBESKY_SCALE_* (see scale_config_test.go). Run it with
// `make bench-kube2sky-scale`; see docs/bench-kube2sky.md.
func BenchmarkKube2SkyAtScale(b *testing.B) {
	cfg, err := parseScaleConfig(os.Getenv)
	if err != nil {
		b.Fatal(err)
	}
	harness.RequireBinaries(b, "etcd", "kube-apiserver", "kube2sky", "skydns")
	began, loadBefore := time.Now(), loadAverage()
	r := &scaleRun{b: b, cfg: cfg}
	r.start()
	tables := append([]*table{r.initialSync(), r.steadyResync()}, r.churn()...)
	if cfg.Pods > 0 {
		tables = append(tables, r.podChurn(), r.podTargets())
	}
	r.report(tables, began, loadBefore)
}

// scaleRun is the state shared by the parts of the benchmark.
type scaleRun struct {
	b       *testing.B
	cfg     scaleConfig
	api     *harness.APIServer
	apiEtcd *harness.Etcd
	kube    kubernetes.Interface // unthrottled, protobuf
	dnsEtcd *harness.Etcd
	k2s     *harness.Kube2Sky
	load    time.Duration // creating every object through the API
	podLoad time.Duration // creating and starting every pod through the API
	sky     *harness.SkyDNS

	// What the pod targets (podTargets) are judged on.
	sync, toRecords time.Duration   // informers synced → every record in etcd; kube2sky start → the same
	syncRecords     int64           // records in etcd after the sync
	syncMem         proc.Memory     // kube2sky's after the sync
	loadPeak        int64           // kube2sky's highest sampled RSS from its start until its informers synced
	reconcilePeak   int64           // the same from then until its first full reconcile was done
	podChurnP       []time.Duration // part 4's p50, p90, p99 and max
	podChurnFailed  int
}

// start runs kube-apiserver and the records etcd, and loads the objects.
func (r *scaleRun) start() {
	b := r.b
	r.apiEtcd = harness.StartEtcd(b)
	r.api = harness.StartAPIServer(b, r.apiEtcd.Endpoint)
	r.dnsEtcd = harness.StartEtcd(b)
	kube, err := fastClient(r.api.Config)
	if err != nil {
		b.Fatal(err)
	}
	r.kube = kube
	begin := time.Now()
	if err := loadScaleObjects(b.Context(), r.kube, r.cfg.Services); err != nil {
		b.Fatal(err)
	}
	r.load = time.Since(begin)
	if r.cfg.Pods > 0 {
		begin = time.Now()
		if err := loadScalePods(b.Context(), r.kube, r.cfg.Pods); err != nil {
			b.Fatal(err)
		}
		r.podLoad = time.Since(begin)
	}
}

// podsNote names the pods in a title, when the run has any.
func (r *scaleRun) podsNote() string {
	if r.cfg.Pods == 0 {
		return ""
	}
	return fmt.Sprintf(", %s running pods (`--pod-records=verified`)", fmtCount(r.cfg.Pods))
}

// kube2skyArgs are kube2sky's flags in every part: pod records when the
// run has pods, then extra.
func (r *scaleRun) kube2skyArgs(extra ...string) []string {
	if r.cfg.Pods > 0 {
		extra = append(extra, "--pod-records=verified")
	}
	return extra
}

// skydnsArgs are skydns's flags: pod records when the run has pods.
func (r *scaleRun) skydnsArgs() []string {
	if r.cfg.Pods > 0 {
		return []string{"--pod-records=verified"}
	}
	return nil
}

// initialSync is part 1: kube2sky started against the loaded API server and
// an empty etcd, timed until every record is written.
func (r *scaleRun) initialSync() *table {
	b := r.b
	start := time.Now()
	r.k2s = harness.NewKube2Sky(b, r.api.Kubeconfig, r.dnsEtcd.Endpoint, r.kube2skyArgs("--resync-period="+r.cfg.Resync.String(), "--pprof")...)
	pid := r.k2s.Process.PID()
	trace := proc.TraceMemory(pid, memorySampleInterval)
	r.k2s.WaitReady(scaleReadyBudget)
	trace.Stop()
	r.saveHeapProfile()
	synced := r.logTime("informers synced")
	written := r.logTime("full reconcile done")
	r.loadPeak, _ = trace.PeakBetween(start, synced)
	r.reconcilePeak, _ = trace.PeakBetween(synced, written.Add(memorySampleInterval))
	cpu, err := proc.CPUTime(pid)
	if err != nil {
		b.Fatal(err)
	}
	mem := memoryOf(b, pid)
	want := int64(r.cfg.Services*keysPerService + r.cfg.Pods*keysPerPod + baseKeys)
	keys := r.countRecords()
	if keys != want {
		b.Fatalf("after the first full reconcile etcd holds %d records, want %d", keys, want)
	}
	m := r.metrics()
	r.sync, r.toRecords, r.syncRecords, r.syncMem = written.Sub(synced), written.Sub(start), keys, mem
	b.ReportMetric(written.Sub(synced).Seconds(), "sync-s")
	t := &table{
		title: fmt.Sprintf("1. Initial sync: %s headless Services, %s endpoints%s, empty records etcd",
			fmtCount(r.cfg.Services), fmtCount(r.cfg.Services*endpointsPerService), r.podsNote()),
		header: []string{"measure", "value", "target", "ratio", "verdict"},
	}
	objects := 2 * r.cfg.Services
	t.add(row(fmt.Sprintf("loading: %s Services + EndpointSlices created through the API (%d at a time)", fmtCount(objects), loadWorkers),
		fmt.Sprintf("%s (%s objects/s)", fmtDuration(r.load), fmtCount(float64(objects)/r.load.Seconds())), noTarget)...)
	if r.cfg.Pods > 0 {
		t.add(row(fmt.Sprintf("loading: %s running pods created and their status set through the API (%d at a time)", fmtCount(r.cfg.Pods), podLoadWorkers),
			fmt.Sprintf("%s (%s pods/s)", fmtDuration(r.podLoad), fmtCount(float64(r.cfg.Pods)/r.podLoad.Seconds())), noTarget)...)
	}
	t.add(row("kube2sky start → informers synced (log)", fmtDuration(synced.Sub(start)), noTarget)...)
	t.add(row("**informers synced → every record in etcd** (first full reconcile done, log)",
		fmtDuration(written.Sub(synced)), targetCells(written.Sub(synced), syncTarget))...)
	t.add(row("kube2sky start → every record in etcd", fmtDuration(written.Sub(start)), noTarget)...)
	t.add(row("records in etcd (counted)", fmtCount(keys), noTarget)...)
	t.add(row("records written", fmtCount(m[metricWritten]), noTarget)...)
	t.add(row("etcd Txns (`--max-txn-ops` 128)", fmt.Sprintf("%s (%.0f records each)", fmtCount(m[metricTxns]), m[metricWritten]/max(m[metricTxns], 1)), noTarget)...)
	t.add(row("kube2sky CPU time, start → ready", fmtDuration(cpu), noTarget)...)
	t.add(row("kube2sky RSS after the sync (VmRSS) / peak (VmHWM)", fmtMB(mem.RSS)+" / "+fmtMB(mem.Peak), noTarget)...)
	t.add(row(fmt.Sprintf("kube2sky highest RSS sampled every %s: start → informers synced / → first full reconcile done", memorySampleInterval),
		fmtMB(r.loadPeak)+" / "+fmtMB(r.reconcilePeak), noTarget)...)
	return t
}

// steadyResync is part 2: full reconciles over records that are all current
// must write nothing; then kube2sky is restarted over the full etcd.
func (r *scaleRun) steadyResync() *table {
	b := r.b
	pid := r.k2s.Process.PID()
	before := r.metrics()
	cpuBefore, err := proc.CPUTime(pid)
	if err != nil {
		b.Fatal(err)
	}
	const resyncs = 2
	harness.Eventually(b, resyncs*r.cfg.Resync+scaleReadyBudget, func() error {
		m, err := r.k2s.Metrics()
		if err != nil {
			return err
		}
		if n := m[metricFullCount] - before[metricFullCount]; n < resyncs {
			return fmt.Errorf("%.0f full reconciles since the sync, waiting for %d", n, resyncs)
		}
		return nil
	})
	after := r.metrics()
	cpuAfter, err := proc.CPUTime(pid)
	if err != nil {
		b.Fatal(err)
	}
	full := after[metricFullCount] - before[metricFullCount]
	delta := func(series string) float64 { return after[series] - before[series] }
	t := &table{
		title:  fmt.Sprintf("2. Steady resync (`--resync-period=%v`), nothing changed", r.cfg.Resync),
		header: []string{"measure", "value", "target", "ratio", "verdict"},
	}
	t.add(row("full reconciles observed", fmtCount(full), noTarget)...)
	t.add(row("full reconcile duration (mean)", fmtDuration(time.Duration(delta(metricFullSum)/full*float64(time.Second))), noTarget)...)
	t.add(row("kube2sky CPU time per full reconcile", fmtDuration(time.Duration(float64(cpuAfter-cpuBefore)/full)), noTarget)...)
	t.add(row("**records written**", fmtCount(delta(metricWritten)), zeroCells(delta(metricWritten)))...)
	t.add(row("records deleted", fmtCount(delta(metricDeleted)), zeroCells(delta(metricDeleted)))...)
	t.add(row("etcd Txns", fmtCount(delta(metricTxns)), zeroCells(delta(metricTxns)))...)
	r.restart(t)
	return t
}

// restart replaces kube2sky by a fresh one with the default resync period
// (so part 3 is not disturbed by full reconciles), and adds how long it
// took to become ready over a full etcd and what it wrote.
func (r *scaleRun) restart(t *table) {
	r.k2s.Process.Stop()
	start := time.Now()
	r.k2s = harness.NewKube2Sky(r.b, r.api.Kubeconfig, r.dnsEtcd.Endpoint, r.kube2skyArgs()...)
	r.k2s.WaitReady(scaleReadyBudget)
	ready := time.Since(start)
	m := r.metrics()
	t.add(row("restart over the full etcd: start → ready (first full reconcile done)", fmtDuration(ready), noTarget)...)
	t.add(row("restart: records written + deleted, Txns", fmt.Sprintf("%s, %s", fmtCount(m[metricWritten]+m[metricDeleted]), fmtCount(m[metricTxns])),
		zeroCells(m[metricWritten]+m[metricDeleted]+m[metricTxns]))...)
}

// churn is part 3: changes at a fixed rate, each timed from the API's
// acknowledgement until skydns answers it.
func (r *scaleRun) churn() []*table {
	b := r.b
	start := time.Now()
	sky := harness.StartSkyDNS(b, r.dnsEtcd.Endpoint, r.skydnsArgs()...)
	r.sky = sky
	var err error
	skyReady := time.Since(start)
	r.spotCheck(sky.DNSAddr)
	before, skyBefore, etcdBefore := r.metrics(), r.skyMetrics(sky), r.etcdMetrics()
	cpu := r.startCPUUse(sky)
	ctx, stopWatch := context.WithCancel(b.Context())
	stages := &churnStages{records: watchRecords(ctx, r.dnsEtcd.Client())}
	if stages.api, err = watchAPI(ctx, r.kube); err != nil {
		b.Fatal(err)
	}
	c := &churner{kube: r.kube, dnsAddr: sky.DNSAddr}
	total := r.cfg.ChurnChanges()
	results, issued := c.run(b.Context(), total, time.Second/time.Duration(r.cfg.ChurnRate))
	stopWatch()
	<-stages.records.done
	<-stages.api.done
	cpuUsed := cpu.String()
	after, skyAfter, etcdAfter := r.metrics(), r.skyMetrics(sky), r.etcdMetrics()
	skyMem, k2sMem, etcdMem := memoryOf(b, sky.Process.PID()), memoryOf(b, r.k2s.Process.PID()), memoryOf(b, r.dnsEtcd.Process.PID())

	t := &table{
		title: fmt.Sprintf("3. Churn: %d changes/s for %v (%s changes), API write acknowledged → answer through skydns",
			r.cfg.ChurnRate, r.cfg.ChurnDuration, fmtCount(total)),
		header: []string{"changes", "count", "failures", "p50", "p90", "p99", "max",
			"of which ack → event at an API watcher, p50 / p99", "ack → records in etcd, p50 / p99", "API write p50 / p99"},
	}
	all := latencyRow(t, "**all**", results, stages, func(churnResult) bool { return true })
	for _, k := range churnKinds {
		latencyRow(t, k.String(), results, stages, func(res churnResult) bool { return res.kind == k })
	}
	b.ReportMetric(float64(all[0])/float64(time.Millisecond), "churn-p50-ms")
	b.ReportMetric(float64(all[2])/float64(time.Millisecond), "churn-p99-ms")

	delta := func(m, before harness.Metrics, series string) float64 { return m[series] - before[series] }
	publishes := delta(skyAfter, skyBefore, metricPublishCount)
	targets := &table{title: "3. Churn: targets and context", header: []string{"measure", "value", "target", "ratio", "verdict"}}
	targets.add(row("**p50** API write acknowledged → DNS answer", fmtDuration(all[0]), targetCells(all[0], churnP50Target))...)
	targets.add(row("**p99** API write acknowledged → DNS answer", fmtDuration(all[2]), targetCells(all[2], churnP99Target))...)
	targets.add(row("changes not visible within "+churnDeadline.String()+" (or failed writes)", fmtCount(failures(results)), zeroCells(float64(failures(results))))...)
	targets.add(row("rate reached (changes issued / time)", fmt.Sprintf("%.1f/s", float64(total)/issued.Seconds()), noTarget)...)
	targets.add(row("kube2sky etcd Txns / records written during the churn", fmt.Sprintf("%s / %s",
		fmtCount(delta(after, before, metricTxns)), fmtCount(delta(after, before, metricWritten))), noTarget)...)
	published := "(skydns exposes no " + metricPublishCount + ")"
	if _, ok := skyAfter[metricPublishCount]; ok {
		published = fmt.Sprintf("%s, %s", fmtCount(publishes),
			fmtDuration(time.Duration(delta(skyAfter, skyBefore, metricPublishSum)/max(publishes, 1)*float64(time.Second))))
	}
	targets.add(row("skydns snapshots published for watch events during the churn, mean publish time", published, noTarget)...)
	for _, h := range []struct{ what, name, selector string }{
		{"kube2sky: event received → records in etcd (`" + metricProgramming + "`)", metricProgramming, ""},
		{"kube2sky: reconcile of one Service (`" + metricReconcile + "{scope=\"service\"}`)", metricReconcile, `scope="service"`},
	} {
		targets.add(row(h.what+", p50 / p99 bucket", fmtBucket(histogramQuantile(before, after, h.name, h.selector, 0.5))+" / "+
			fmtBucket(histogramQuantile(before, after, h.name, h.selector, 0.99)), noTarget)...)
	}
	targets.add(row("kube2sky Go GC cycles during the churn; heap in use at the end", fmt.Sprintf("%s; %s",
		fmtCount(delta(after, before, metricGCCount)), fmtMB(int64(after[metricHeapInUse]))), noTarget)...)
	targets.add(row("records etcd: backend commit p99 bucket; applies slower than 100 ms", fmtBucket(histogramQuantile(etcdBefore, etcdAfter,
		metricEtcdCommit, "", 0.99))+"; "+fmtCount(delta(etcdAfter, etcdBefore, metricEtcdSlowApply)), noTarget)...)
	targets.add(row("CPU time during the churn (from its start until the last change is seen)", cpuUsed, noTarget)...)
	targets.add(row("kube2sky RSS at the end (VmRSS) / peak since its restart (VmHWM)", fmtMB(k2sMem.RSS)+" / "+fmtMB(k2sMem.Peak), noTarget)...)
	targets.add(row("skydns start → ready (lists every record)", fmtDuration(skyReady), noTarget)...)
	targets.add(row("skydns RSS at the end (VmRSS) / peak (VmHWM)", fmtMB(skyMem.RSS)+" / "+fmtMB(skyMem.Peak), noTarget)...)
	targets.add(row("records etcd RSS at the end (VmRSS) / peak (VmHWM)", fmtMB(etcdMem.RSS)+" / "+fmtMB(etcdMem.Peak), noTarget)...)
	return []*table{t, targets}
}

// churnStages are the watches that time the stages of each change.
type churnStages struct {
	api     *firstSeen // an API watch delivered the object's event
	records *firstSeen // the records changed in etcd
}

// latencyRow adds the row of the results that match and returns its p50,
// p90, p99 and max.
func latencyRow(t *table, name string, results []churnResult, stages *churnStages, match func(churnResult) bool) []time.Duration {
	cols := newLatencyCols(2)
	for _, res := range results {
		if match(res) {
			cols.add(res.write, res.visible, res.err, stages.api.sinceKey(res.service, res.acked), stages.records.sinceKey(res.service, res.acked))
		}
	}
	return cols.addRow(t, name)
}

// latencyCols gathers the latencies of a row of changes: every write's
// round trip and, for the changes that did not fail, how long each took to
// show in DNS and to reach each stage.
type latencyCols struct {
	writes, visible []time.Duration
	stages          [][]time.Duration
	failed          int
}

func newLatencyCols(stages int) *latencyCols {
	return &latencyCols{stages: make([][]time.Duration, stages)}
}

// add adds a change; stages holds, for each stage, how long after the
// acknowledgement it saw the change, when it did.
func (c *latencyCols) add(write, visible time.Duration, err error, stages ...stageSeen) {
	c.writes = append(c.writes, write)
	if err != nil {
		c.failed++
		return
	}
	c.visible = append(c.visible, visible)
	for i, s := range stages {
		if s.ok {
			c.stages[i] = append(c.stages[i], s.after)
		}
	}
}

// addRow adds the row named name to t: the count, the failures, the
// visible latency's p50, p90, p99 and max (which it returns), each stage's
// p50 / p99 and the writes' p50 / p99.
func (c *latencyCols) addRow(t *table, name string) []time.Duration {
	p := percentiles(c.visible, 50, 90, 99, 100)
	row := []string{name, fmtCount(len(c.writes)), fmtCount(c.failed), fmtDuration(p[0]), fmtDuration(p[1]), fmtDuration(p[2]), fmtDuration(p[3])}
	for _, s := range c.stages {
		row = append(row, p50p99(s))
	}
	t.add(append(row, p50p99(c.writes))...)
	return p
}

// p50p99 prints "p50 / p99" of latencies.
func p50p99(latencies []time.Duration) string {
	p := percentiles(latencies, 50, 99)
	return fmtDuration(p[0]) + " / " + fmtDuration(p[1])
}

func failures(results []churnResult) int {
	n := 0
	for _, res := range results {
		if res.err != nil {
			n++
		}
	}
	return n
}

// spotCheck asks skydns for one endpoint of the first, middle and last
// preloaded Service, and for the first, middle and last preloaded pod;
// each must answer its address.
func (r *scaleRun) spotCheck(addr string) {
	for _, i := range []int{0, r.cfg.Services / 2, r.cfg.Services - 1} {
		qname := scaleHostname(2) + "." + scaleServiceName(i) + "." + scaleNamespace + ".svc.cluster.local."
		msg, err := harness.Query(addr, "udp", qname, dns.TypeA)
		if err != nil {
			r.b.Fatal(err)
		}
		if want := scaleEndpointIP(i, 2); !answerHolds(msg, want) {
			r.b.Fatalf("%s A: %v, want %s", qname, msg.Answer, want)
		}
	}
	if r.cfg.Pods == 0 {
		return
	}
	for _, i := range []int{0, r.cfg.Pods / 2, r.cfg.Pods - 1} {
		ip := nthIPv4(scalePodBase, i)
		msg, err := harness.Query(addr, "udp", podName(ip), dns.TypeA)
		if err != nil {
			r.b.Fatal(err)
		}
		if !answerHolds(msg, ip) {
			r.b.Fatalf("%s A: %v, want %s", podName(ip), msg.Answer, ip)
		}
	}
}

// logTime returns the time of kube2sky's first log line containing msg.
func (r *scaleRun) logTime(msg string) time.Time {
	line, ok := r.k2s.Process.LogLine(msg)
	if !ok {
		r.b.Fatalf("kube2sky logged no %q", msg)
	}
	t, err := slogTime(line)
	if err != nil {
		r.b.Fatal(err)
	}
	return t
}

// scrape fetches and parses one server's /metrics, failing the benchmark
// when it cannot.
func (r *scaleRun) scrape(url string) harness.Metrics {
	m, err := harness.ScrapeMetrics(url)
	if err != nil {
		r.b.Fatal(err)
	}
	return m
}

// skyMetrics scrapes skydns's /metrics.
func (r *scaleRun) skyMetrics(sky *harness.SkyDNS) harness.Metrics {
	return r.scrape("http://" + sky.HTTPAddr + "/metrics")
}

// etcdMetrics scrapes the records etcd's /metrics.
func (r *scaleRun) etcdMetrics() harness.Metrics {
	return r.scrape(r.dnsEtcd.Endpoint + "/metrics")
}

// cpuUse is the CPU time processes have used since startCPUUse.
type cpuUse struct {
	b     *testing.B
	names []string
	pids  []int
	start []time.Duration
}

// startCPUUse samples the CPU time of every server of the run, and of this
// process (the load generator and the DNS pollers).
func (r *scaleRun) startCPUUse(sky *harness.SkyDNS) *cpuUse {
	u := &cpuUse{b: r.b, names: []string{"kube2sky", "skydns", "kube-apiserver", "API etcd", "records etcd", "benchmark"},
		pids: []int{r.k2s.Process.PID(), sky.Process.PID(), r.api.Process.PID(), r.apiEtcd.Process.PID(), r.dnsEtcd.Process.PID(), os.Getpid()}}
	u.start = u.sample()
	return u
}

func (u *cpuUse) sample() []time.Duration {
	out := make([]time.Duration, len(u.pids))
	for i, pid := range u.pids {
		d, err := proc.CPUTime(pid)
		if err != nil {
			u.b.Fatalf("CPU time of %s: %v", u.names[i], err)
		}
		out[i] = d
	}
	return out
}

// String lists each process's CPU time since the start.
func (u *cpuUse) String() string {
	now := u.sample()
	parts := make([]string, len(now))
	for i := range now {
		parts[i] = u.names[i] + " " + fmtDuration(now[i]-u.start[i])
	}
	return strings.Join(parts, ", ")
}

// metrics scrapes kube2sky's /metrics.
func (r *scaleRun) metrics() harness.Metrics {
	return r.scrape("http://" + r.k2s.HTTPAddr + "/metrics")
}

// countRecords counts the keys of the zone and of the reverse zones.
func (r *scaleRun) countRecords() int64 {
	ctx, cancel := context.WithTimeout(r.b.Context(), 30*time.Second)
	defer cancel()
	var n int64
	for _, prefix := range []string{"/skydns/local/cluster/", "/skydns/arpa/"} {
		resp, err := r.dnsEtcd.Client().Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil {
			r.b.Fatalf("counting %s: %v", prefix, err)
		}
		n += resp.Count
	}
	return n
}

// report prints the tables and writes them, with how the run was made, to
// the configured file.
func (r *scaleRun) report(tables []*table, began time.Time, loadBefore string) {
	var body strings.Builder
	for _, t := range tables {
		body.WriteString(t.String())
	}
	fmt.Print(body.String())
	if r.cfg.Out == "" {
		return
	}
	var doc strings.Builder
	fmt.Fprintf(&doc, "# kube2sky at scale, through the real kube-apiserver\n\n")
	fmt.Fprintf(&doc, "%s, %v. Command: `%s` (`go test -run '^$' -bench Kube2SkyAtScale -benchtime 1x ./integration/`) with "+
		"%s=%d %s=%d %s=%v %s=%v%s.\n\n", began.UTC().Format(time.RFC3339), time.Since(began).Round(time.Second), r.makeTarget(),
		envScaleServices, r.cfg.Services, envScaleChurnRate, r.cfg.ChurnRate, envScaleChurnDuration, r.cfg.ChurnDuration, envScaleResync, r.cfg.Resync, r.podsEnv())
	fmt.Fprintf(&doc, "Machine: %s at the start, %s at the end; %s; kube-apiserver %s.\n\n",
		machineNote(loadBefore), loadAverage(), binaryVersion("kube2sky"), binaryVersion("kube-apiserver"))
	doc.WriteString(body.String())
	if err := os.MkdirAll(filepath.Dir(r.cfg.Out), 0o755); err != nil {
		r.b.Fatal(err)
	}
	if err := os.WriteFile(r.cfg.Out, []byte(doc.String()), 0o644); err != nil {
		r.b.Fatal(err)
	}
}

// makeTarget is the make target that runs this benchmark at the run's
// size.
func (r *scaleRun) makeTarget() string {
	if r.cfg.Pods > 0 {
		return "make bench-kube2sky-pods"
	}
	return "make bench-kube2sky-scale"
}

// podsEnv is the pod settings of the command, when the run has pods.
func (r *scaleRun) podsEnv() string {
	if r.cfg.Pods == 0 {
		return ""
	}
	return fmt.Sprintf(" %s=%d %s=%d", envScalePods, r.cfg.Pods, envScalePodChurnRate, r.cfg.PodChurnRate)
}

// binaryVersion runs `<name> --version` from bin/ and returns its first line.
func binaryVersion(name string) string {
	out, err := exec.Command(harness.Binary(name), "--version").Output()
	if err != nil {
		return "(version unknown)"
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return first
}

// memorySampleInterval is how often the initial sync reads kube2sky's
// RSS, to tell which phase its peak falls in.
const memorySampleInterval = 20 * time.Millisecond

// memoryOf is process pid's RSS and peak, failing the benchmark when /proc
// cannot tell.
func memoryOf(b *testing.B, pid int) proc.Memory {
	b.Helper()
	mem, err := proc.ReadMemory(pid)
	if err != nil {
		b.Fatal(err)
	}
	return mem
}
