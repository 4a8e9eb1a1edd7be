package skydns

import (
	"strings"
	"time"

	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/kubesky/kubesky/etcdstore"
	"github.com/kubesky/kubesky/internal/version"
	"github.com/kubesky/kubesky/skydns/dnsserver"
	"github.com/kubesky/kubesky/skydns/fastpath"
	"github.com/kubesky/kubesky/skydns/resolver"
	"github.com/kubesky/kubesky/skydns/snapshot"
	"github.com/kubesky/kubesky/skydns/transfer"
)

// Metrics are the daemon's Prometheus metrics, in a registry of their own.
type Metrics struct {
	Registry *prometheus.Registry

	// answers counts the answered queries of both paths: the fast path's
	// readers have shards of their own, the ordinary path shares one. They
	// are made, for the served zones, when DNS starts (startAnswers).
	answers          *fastpath.Stats
	ordinary         *fastpath.Shard
	zoneOf           func(name string) (zone string, ok bool)
	answersCollector *answersCollector
	malformedPackets prometheus.Counter
	revision         prometheus.Gauge
	records          prometheus.Gauge
	malformedTotal   prometheus.Counter
	malformedNow     prometheus.Gauge
	lists            prometheus.Counter
	publish          *prometheus.HistogramVec
	eventsApplied    prometheus.Counter
	etcdErrors       prometheus.Counter
	connected        prometheus.Gauge
	synced           prometheus.Gauge
	panics           *prometheus.CounterVec
	transfers        *prometheus.CounterVec
	notifies         *prometheus.CounterVec
}

// NewMetrics registers the metrics, and Go and process collectors, in a new
// registry. stale reports the seconds since the snapshot was last
// confirmed current by etcd.
func NewMetrics(stale func() float64) *Metrics {
	m := &Metrics{Registry: prometheus.NewRegistry()}
	m.answersCollector = newAnswersCollector()
	m.malformedPackets = newCounter("skydns_dns_malformed_packets_total", "Packets that did not parse as DNS messages (answered FORMERR when the header parsed, else dropped).")
	m.revision = newGauge("skydns_snapshot_revision", "etcd revision of the snapshot being served.")
	m.records = newGauge("skydns_snapshot_records", "Records in the snapshot being served.")
	m.malformedTotal = newCounter("skydns_malformed_values_total", "Distinct malformed etcd values seen (a key with a new bad value counts once, re-lists do not count again).")
	m.malformedNow = newGauge("skydns_malformed_values", "Keys whose current value is malformed and skipped.")
	m.lists = newCounter("skydns_etcd_lists_total", "Full lists of the prefix: the first, and every re-list after a compacted watch or a lost revision.")
	m.publish = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "skydns_snapshot_publish_seconds",
		Help:    "Time to build and publish the snapshot of one update: a full list (update=\"list\") or one watched revision (update=\"watch\").",
		Buckets: prometheus.ExponentialBuckets(0.000004, 2, 22), // 4µs .. 8.4s
	}, []string{"update"})
	m.eventsApplied = newCounter("skydns_watch_events_applied_total", "Watch events (puts and deletes) applied to the snapshot; the records of full lists are not counted.")
	m.etcdErrors = newCounter("skydns_etcd_errors_total", "Failed etcd lists, watches and probes; each is followed by a retry (a watch restart).")
	m.connected = newGauge("skydns_etcd_connected", "1 while etcd is reachable, else 0.")
	m.synced = newGauge("skydns_mirror_synced", "1 once the prefix has been listed, else 0.")
	m.panics = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "skydns_panics_total",
		Help: "Queries whose answering panicked, by path (fast, udp, tcp, forward): each was answered SERVFAIL and logged with its packet.",
	}, []string{"path"})
	for _, path := range []string{"fast", "udp", "tcp", "forward"} {
		m.panics.WithLabelValues(path)
	}
	m.transfers = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "skydns_zone_transfers_total",
		Help: "Zone transfer requests (AXFR, IXFR) over TCP with --transfer-to set, by result: " + strings.Join(transfer.Results, ", ") + ".",
	}, []string{"result"})
	m.notifies = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "skydns_notify_total",
		Help: "NOTIFY messages sent to the --notify targets, by result: " + strings.Join(transfer.NotifyResults, ", ") + ".",
	}, []string{"result"})
	staleGauge := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "skydns_snapshot_stale_seconds",
		Help: "Seconds since etcd last confirmed the snapshot current (a list, a watch response or a probe, every --etcd-probe-interval while etcd answers); 0 before the first list.",
	}, stale)
	m.Registry.MustRegister(m.answersCollector, m.malformedPackets, m.revision, m.records,
		m.malformedTotal, m.malformedNow, m.lists, m.publish, m.eventsApplied, m.etcdErrors, m.connected, m.synced, m.panics, staleGauge,
		m.transfers, m.notifies,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.Registry.MustRegister(version.BuildInfo("skydns"))
	return m
}

func newCounter(name, help string) prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
}

func newGauge(name, help string) prometheus.Gauge {
	return prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
}

// startAnswers makes the counts of answered queries for the zones res
// serves, before DNS is served; exportAnswers exports them once it is.
func (m *Metrics) startAnswers(res *resolver.Resolver) *fastpath.Stats {
	m.answers = fastpath.NewStats(res.Zones()...)
	m.ordinary = m.answers.NewShard(false)
	m.zoneOf = res.Zone
	return m.answers
}

// exportAnswers exports the counts of answered queries under the server
// label of the DNS address addr.
func (m *Metrics) exportAnswers(addr string) { m.answersCollector.serve(m.answers, addr) }

// observeExchange counts one query the ordinary path answered.
func (m *Metrics) observeExchange(e dnsserver.Exchange) {
	var qtype uint16
	var zone string
	hasQuestion := len(e.Request.Question) > 0
	if hasQuestion {
		q := e.Request.Question[0]
		qtype = q.Qtype
		zone, _ = m.zoneOf(strings.ToLower(q.Name))
	}
	series := m.answers.Series(zone, qtype, hasQuestion, e.Response.Rcode)
	m.ordinary.Answered(series, fastpath.NewTransport(e.Proto == "tcp", dnsserver.IP(e.Client).Is6()), msgLen(e.Request), msgLen(e.Response))
	m.ordinary.Took(series, e.Duration)
}

// msgLen is m's size in wire format, or 0 when computing it panics: a
// query that made the router panic is counted too, after the recovery.
func msgLen(m *dns.Msg) (n int) {
	defer func() {
		if recover() != nil {
			n = 0
		}
	}()
	return m.Len()
}

// observeSnapshot records a newly published snapshot, made from an update
// of events in took.
func (m *Metrics) observeSnapshot(s *snapshot.Snapshot, full bool, events int, took time.Duration) {
	m.revision.Set(float64(s.Revision()))
	m.records.Set(float64(s.Len()))
	if full {
		m.lists.Inc()
		m.publish.WithLabelValues("list").Observe(took.Seconds())
		return
	}
	m.eventsApplied.Add(float64(events))
	m.publish.WithLabelValues("watch").Observe(took.Seconds())
}

// observeMalformed records the malformed values an update brought that
// were not seen before (added) and the keys whose value is malformed now.
func (m *Metrics) observeMalformed(added, now int) {
	m.malformedTotal.Add(float64(added))
	m.malformedNow.Set(float64(now))
}

// observeMalformedPacket counts a packet that did not parse.
func (m *Metrics) observeMalformedPacket() { m.malformedPackets.Inc() }

// observePanic counts a query whose answering panicked on path.
func (m *Metrics) observePanic(path string) { m.panics.WithLabelValues(path).Inc() }

// observeTransfer counts a zone transfer request by its result.
func (m *Metrics) observeTransfer(result string) { m.transfers.WithLabelValues(result).Inc() }

// observeNotify counts a NOTIFY sent by its result.
func (m *Metrics) observeNotify(result string) { m.notifies.WithLabelValues(result).Inc() }

// clustersetObserver registers the clusterset feed's gauges (only with
// --clusterset-prefix) and returns what records its states.
func (m *Metrics) clustersetObserver() func(etcdstore.State) {
	connected := newGauge("skydns_clusterset_etcd_connected", "1 while the etcd clusterset.local is read from (--clusterset-etcd-endpoints, else --etcd-endpoints) is reachable, else 0.")
	synced := newGauge("skydns_clusterset_synced", "1 once the clusterset prefix has been listed, else 0 (clusterset.local answers SERVFAIL until then).")
	m.Registry.MustRegister(connected, synced)
	return func(s etcdstore.State) {
		connected.Set(boolGauge(s.Connected))
		synced.Set(boolGauge(s.Synced))
	}
}

// observeState records a change of the list-then-watch loop's state.
func (m *Metrics) observeState(s etcdstore.State) {
	m.connected.Set(boolGauge(s.Connected))
	m.synced.Set(boolGauge(s.Synced))
	if !s.Connected && s.Err != nil {
		m.etcdErrors.Inc()
	}
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// staleSeconds is the value of skydns_snapshot_stale_seconds for s.
func staleSeconds(s etcdstore.State, now time.Time) float64 {
	if s.Confirmed.IsZero() {
		return 0
	}
	return now.Sub(s.Confirmed).Seconds()
}
