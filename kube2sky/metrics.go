package kube2sky

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/kubesky/kubesky/internal/version"
	"github.com/kubesky/kubesky/kube2sky/source"
)

// metrics are kube2sky's Prometheus metrics, on a registry of their own.
type metrics struct {
	registry          *prometheus.Registry
	recordsWritten    prometheus.Counter
	recordsDeleted    prometheus.Counter
	txns              prometheus.Counter
	txnFailures       *prometheus.CounterVec
	foreignKeys       prometheus.Counter
	invalidObjects    *prometheus.CounterVec
	reconcileDuration *prometheus.HistogramVec
	programming       prometheus.Histogram
	leader            prometheus.Gauge
	etcdReachable     prometheus.Gauge
	hostsInvalidLines prometheus.Gauge
	hostsRecords      prometheus.Gauge
}

// Reasons a write Txn fails.
const (
	failNotLeader = "not_leader"
	failConflict  = "conflict"
	failError     = "error"
)

func newMetrics(queueDepth func() float64) *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		recordsWritten: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kube2sky_records_written_total", Help: "Keys put into etcd.",
		}),
		recordsDeleted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kube2sky_records_deleted_total", Help: "Keys deleted from etcd, orphans included.",
		}),
		txns: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kube2sky_etcd_txns_total", Help: "Write transactions committed to etcd.",
		}),
		txnFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kube2sky_etcd_txn_failures_total",
			Help: "Write transactions that did not commit, by reason: not_leader (fenced off), conflict (a key changed since it was read), error.",
		}, []string{"reason"}),
		foreignKeys: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kube2sky_foreign_keys_skipped_total", Help: "Desired keys left alone because a record kube2sky does not own is there.",
		}),
		invalidObjects: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kube2sky_invalid_objects_total", Help: "Newly seen problems in objects (fields that yield no record), by kind.",
		}, []string{"kind"}),
		reconcileDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "kube2sky_reconcile_duration_seconds", Help: "Duration of reconciles, by scope: service or full.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10),
		}, []string{"scope"}),
		programming: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "kube2sky_dns_programming_latency_seconds",
			Help:    "From an object change (EndpointSlice last-change-trigger-time, else when the event arrived) until etcd holds records reflecting it (written, or found already plan.Current).",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 15),
		}),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "kube2sky_leader", Help: "1 while this replica is the leader and writes, else 0.",
		}),
		etcdReachable: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "kube2sky_etcd_reachable", Help: "1 while etcd answers, else 0.",
		}),
	}
	m.hostsInvalidLines = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "kube2sky_hosts_invalid_lines", Help: "Lines of the --hosts-configmap ConfigMap skipped because they cannot be served.",
	})
	m.hostsRecords = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "kube2sky_hosts_records", Help: "Records (A/AAAA and PTR) the --hosts-configmap ConfigMap yields.",
	})
	for _, reason := range []string{failNotLeader, failConflict, failError} { // every reason shows, at 0 until counted
		m.txnFailures.WithLabelValues(reason)
	}
	depth := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "kube2sky_queue_depth", Help: "Services waiting to be reconciled.",
	}, queueDepth)
	m.registry.MustRegister(m.recordsWritten, m.recordsDeleted, m.txns, m.txnFailures, m.foreignKeys,
		m.invalidObjects, m.reconcileDuration, m.programming, m.leader, m.etcdReachable, depth, m.hostsInvalidLines, m.hostsRecords,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), version.BuildInfo("kube2sky"))
	return m
}

// source returns the metrics the cluster's side counts in.
func (m *metrics) source() source.Metrics {
	return source.Metrics{InvalidObjects: m.invalidObjects, HostsInvalidLines: m.hostsInvalidLines, HostsRecords: m.hostsRecords}
}
