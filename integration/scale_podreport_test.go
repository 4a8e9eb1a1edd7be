package integration

import (
	"context"
	"fmt"
	"time"

	"github.com/miekg/dns"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kubesky/kubesky/integration/harness"
)

// Targets of the pods at scale (runs with KUBESKY_SCALE_PODS).
const (
	// podSyncTarget bounds informers synced → every record in etcd at
	// Kubernetes' limit of 150,000 pods.
	podSyncTarget = 30 * time.Second
	// skydnsRawFactor × the raw bytes of the records, plus skydns's RSS
	// with none, bounds skydns's RSS.
	skydnsRawFactor = 2
)

// coreDNSModel is the memory CoreDNS's scaling guide gives one replica for
// a cluster's pods and services, (pods + services) / 1000 + 54 MB, less the
// 30 MB of its answer cache and the 5 MB it reserves for queries, which
// kube2sky has neither of: ~179 MB at 150,000 pods and 10,000 Services.
// kube2sky's resident memory is held to it.
func coreDNSModel(pods, services int) int64 {
	const mb = 1 << 20
	return int64(pods+services)*mb/1000 + (54-30-5)*mb
}

// podChurn is part 4: pods started and deleted at a fixed rate, each timed
// from the API's acknowledgement until skydns answers it.
func (r *scaleRun) podChurn() *table {
	b := r.b
	ctx, stopWatch := context.WithCancel(b.Context())
	records := watchKeys(ctx, r.dnsEtcd.Client(), "/skydns/local/cluster/pod/"+scaleNamespace+"/")
	c := &podChurner{kube: r.kube, dnsAddr: r.sky.DNSAddr}
	total := r.cfg.PodChurnChanges()
	results, issued := openLoop(b.Context(), total, time.Second/time.Duration(r.cfg.PodChurnRate), c.change)
	stopWatch()
	<-records.done
	t := &table{
		title: fmt.Sprintf("4. Pod churn: %d pod changes/s for %v (%s changes, %.1f/s reached), API write acknowledged → answer through skydns",
			r.cfg.PodChurnRate, r.cfg.ChurnDuration, fmtCount(total), float64(total)/issued.Seconds()),
		header: []string{"changes", "count", "failures", "p50", "p90", "p99", "max", "ack → record in etcd, p50 / p99", "API write p50 / p99"},
	}
	r.podChurnP, r.podChurnFailed = podLatencyRow(t, "**all**", results, records, func(podChurnResult) bool { return true })
	for _, k := range podChurnKinds {
		podLatencyRow(t, k.String(), results, records, func(res podChurnResult) bool { return res.kind == k })
	}
	return t
}

// podLatencyRow adds the row of the pod changes that match and returns
// their p50, p90, p99 and max, and how many failed.
func podLatencyRow(t *table, name string, results []podChurnResult, records *firstSeen, match func(podChurnResult) bool) ([]time.Duration, int) {
	cols := newLatencyCols(1)
	for _, res := range results {
		if match(res) {
			cols.add(res.write, res.visible, res.err, records.sinceKey(res.label, res.acked))
		}
	}
	return cols.addRow(t, name), cols.failed
}

// podTargets is the last table of a run with pods: the figures at that
// scale against their targets.
func (r *scaleRun) podTargets() *table {
	b := r.b
	k2s, sky := memoryOf(b, r.k2s.Process.PID()), memoryOf(b, r.sky.Process.PID())
	raw := r.rawRecordBytes()
	base := r.skydnsBase()
	model := coreDNSModel(r.cfg.Pods, r.cfg.Services)
	skyBudget := skydnsRawFactor*raw + base
	m := r.metrics()
	t := &table{
		title:  fmt.Sprintf("5. %s running pods and %s Services: targets", fmtCount(r.cfg.Pods), fmtCount(r.cfg.Services)),
		header: []string{"measure", "value", "target", "ratio", "verdict"},
	}
	t.add(row("**informers synced → every record in etcd** (part 1)", fmtDuration(r.sync), targetCells(r.sync, podSyncTarget))...)
	t.add(row("kube2sky start → every record in etcd (part 1)", fmtDuration(r.toRecords), noTarget)...)
	t.add(row("records in etcd after the sync", fmtCount(r.syncRecords), noTarget)...)
	t.add(row("records written, etcd Txns since kube2sky's restart (parts 3 and 4)", fmt.Sprintf("%s, %s", fmtCount(m[metricWritten]), fmtCount(m[metricTxns])), noTarget)...)
	modelNote := " (CoreDNS's model less its cache and query buffer)"
	t.add(row("**kube2sky RSS after the sync** (VmRSS)", fmtMB(r.syncMem.RSS), bytesCells(r.syncMem.RSS, model, modelNote))...)
	t.add(row("**kube2sky peak through the sync** (VmHWM)", fmtMB(r.syncMem.Peak), bytesCells(r.syncMem.Peak, model, modelNote))...)
	t.add(row("kube2sky highest sampled RSS: informers loading / first full reconcile (part 1)", fmtMB(r.loadPeak)+" / "+fmtMB(r.reconcilePeak), noTarget)...)
	t.add(row("kube2sky RSS after the churns / peak since its restart", fmtMB(k2s.RSS)+" / "+fmtMB(k2s.Peak), bytesCells(k2s.Peak, model, modelNote))...)
	t.add(row(fmt.Sprintf("**skydns RSS after the churns** (raw keys + values %s, skydns with no records %s)", fmtMB(raw), fmtMB(base)),
		fmtMB(sky.RSS)+" (peak "+fmtMB(sky.Peak)+")", bytesCells(sky.RSS, skyBudget, fmt.Sprintf(" (%d × raw + base)", skydnsRawFactor)))...)
	t.add(row("pod churn (part 4): p50 / p99 / max, API write acknowledged → DNS answer", fmtDuration(r.podChurnP[0])+" / "+
		fmtDuration(r.podChurnP[2])+" / "+fmtDuration(r.podChurnP[3]), noTarget)...)
	t.add(row("pod changes not visible within "+churnDeadline.String()+" (or failed writes)", fmtCount(r.podChurnFailed), zeroCells(float64(r.podChurnFailed)))...)
	return t
}

// bytesCells are the target, ratio and verdict columns of a size that
// should stay at or below target.
func bytesCells(measured, target int64, note string) []string {
	verdict := "met"
	if measured > target {
		verdict = "missed"
	}
	return []string{"≤ " + fmtMB(target) + note, fmt.Sprintf("%.2f×", float64(measured)/float64(target)), verdict}
}

// rawRecordBytes adds up the length of every key and value of the zone and
// of the reverse zones, a page at a time.
func (r *scaleRun) rawRecordBytes() int64 {
	var n int64
	for _, prefix := range []string{"/skydns/local/cluster/", "/skydns/arpa/"} {
		next, end := prefix, clientv3.GetPrefixRangeEnd(prefix)
		for {
			ctx, cancel := context.WithTimeout(r.b.Context(), 30*time.Second)
			resp, err := r.dnsEtcd.Client().Get(ctx, next, clientv3.WithRange(end), clientv3.WithLimit(10000))
			cancel()
			if err != nil {
				r.b.Fatalf("reading %s: %v", prefix, err)
			}
			for _, kv := range resp.Kvs {
				n += int64(len(kv.Key) + len(kv.Value))
			}
			if !resp.More || len(resp.Kvs) == 0 {
				break
			}
			next = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
		}
	}
	return n
}

// skydnsBase is the RSS of a skydns with the run's flags over an empty
// etcd, after one answer: the fixed part of skydns's memory target.
func (r *scaleRun) skydnsBase() int64 {
	empty := harness.StartEtcd(r.b)
	sky := harness.StartSkyDNS(r.b, empty.Endpoint, r.skydnsArgs()...)
	defer sky.Process.Stop()
	if _, err := harness.Query(sky.DNSAddr, "udp", "kubernetes.default.svc.cluster.local.", dns.TypeA); err != nil {
		r.b.Fatal(err)
	}
	return memoryOf(r.b, sky.Process.PID()).RSS
}
