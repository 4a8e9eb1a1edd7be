package forward

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the forwarder's Prometheus collectors.
type metrics struct {
	hits       prometheus.Counter
	misses     prometheus.Counter
	evictions  prometheus.Counter
	tcpRetries prometheus.Counter
	upstream   *prometheus.CounterVec // labels: upstream, result
	refused    *prometheus.CounterVec // labels: reason
	servfail   prometheus.Counter
	stale      prometheus.Counter
	prefetches prometheus.Counter
	probes     *prometheus.CounterVec // labels: upstream, result
	ignored    *prometheus.CounterVec // labels: reason
	loops      *prometheus.GaugeVec   // labels: upstream
}

func newMetrics() *metrics {
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: "skydns", Subsystem: "forward", Name: name, Help: help})
	}
	return &metrics{
		hits:       counter("cache_hits_total", "Forwarded queries answered from the cache."),
		misses:     counter("cache_misses_total", "Forwarded queries not found in the cache."),
		evictions:  counter("cache_evictions_total", "Cache entries pushed out to make room."),
		tcpRetries: counter("tcp_retries_total", "Truncated UDP replies asked again over TCP."),
		servfail:   counter("servfail_total", "Forwarded queries answered SERVFAIL because no upstream answered."),
		stale:      counter("stale_answers_total", "Forwarded queries answered from an expired cache entry because no upstream answered (--serve-stale)."),
		prefetches: counter("prefetches_total", "Cache entries refreshed in the background before they expired (--cache-prefetch)."),
		probes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "skydns", Subsystem: "forward", Name: "health_probes_total",
			Help: "Health checks of upstreams that failed, by upstream and result (ok, timeout, error).",
		}, []string{"upstream", "result"}),
		upstream: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "skydns", Subsystem: "forward", Name: "upstream_requests_total",
			Help: "Attempts at an upstream, by upstream and result (ok, rcode_failure, timeout, error, malformed, over_limit).",
		}, []string{"upstream", "result"}),
		ignored: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "skydns", Subsystem: "forward", Name: "ignored_replies_total",
			Help: "Datagrams read while waiting for an upstream's reply that did not answer the query (forged, late or broken), ignored, by reason (source, id, malformed, question, case, cookie, no_cookie).",
		}, []string{"reason"}),
		loops: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "skydns", Subsystem: "forward", Name: "loop",
			Help: "1 while a forwarding loop is found through the upstream (its loop probe came back; it is not forwarded to), else 0.",
		}, []string{"upstream"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "skydns", Subsystem: "forward", Name: "refused_total",
			Help: "Queries for names outside the zones refused, by reason (acl, no_recursion_desired, class, transfer).",
		}, []string{"reason"}),
	}
}

// register adds the collectors and a gauge of the cache's size to reg.
func (m *metrics) register(reg prometheus.Registerer, cacheLen func() int) error {
	entries := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: "skydns", Subsystem: "forward", Name: "cache_entries",
		Help: "Entries in the forwarding cache.",
	}, func() float64 { return float64(cacheLen()) })
	for _, c := range []prometheus.Collector{m.hits, m.misses, m.evictions, m.tcpRetries, m.servfail, m.stale, m.prefetches, m.probes, m.upstream, m.refused, m.ignored, m.loops, entries} {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("registering forwarding metrics: %w", err)
		}
	}
	return nil
}
