package skydns

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubesky/kubesky/skydns/fastpath"
)

// answersCollector exports a fastpath.Stats with the labels and buckets of
// CoreDNS's prometheus plugin (coredns_dns_requests_total and the rest
// become skydns_dns_...): the answers, latencies and sizes of both paths,
// and what the fast path passed on, filled or dropped. Counting costs the
// DNS paths a few atomic adds into arrays; the labelled series are made
// here, on scrape.
type answersCollector struct {
	mu     sync.Mutex // guards stats and server
	stats  *fastpath.Stats
	server string // the server label: "dns://" and the DNS address

	requests, responses, duration *prometheus.Desc
	requestSize, responseSize     *prometheus.Desc
	fastAnswers, passed, dropped  *prometheus.Desc
	filled                        *prometheus.Desc
}

// pluginLabel is the responses' plugin label for a zone label: who
// answered. Names in the zones are answered from the snapshot.
func pluginLabel(zone string) string {
	if zone == fastpath.OutsideZones {
		return "forward"
	}
	return "skydns"
}

func newAnswersCollector() *answersCollector {
	return &answersCollector{
		requests: prometheus.NewDesc("skydns_dns_requests_total",
			"DNS queries answered, by server, zone (\".\": outside the zones), proto, family (1: IPv4, 2: IPv6) and query type.",
			[]string{"server", "zone", "proto", "family", "type"}, nil),
		responses: prometheus.NewDesc("skydns_dns_responses_total",
			"DNS responses written, by server, zone, rcode and plugin (skydns: from the snapshot; forward: names outside the zones).",
			[]string{"server", "zone", "rcode", "plugin"}, nil),
		duration: prometheus.NewDesc("skydns_dns_request_duration_seconds",
			"Time from reading a query to writing its answer, by server, zone and query type (the fast path times a batch and counts it for each query in it).",
			[]string{"server", "zone", "type"}, nil),
		requestSize: prometheus.NewDesc("skydns_dns_request_size_bytes",
			"Size of the queries answered, in bytes.", []string{"server", "zone", "proto"}, nil),
		responseSize: prometheus.NewDesc("skydns_dns_response_size_bytes",
			"Size of the responses written, in bytes.", []string{"server", "zone", "proto"}, nil),
		fastAnswers: prometheus.NewDesc("skydns_dns_fast_path_answers_total",
			"Queries answered by the UDP fast path from packed answers (also counted in skydns_dns_requests_total).", nil, nil),
		passed: prometheus.NewDesc("skydns_dns_fast_path_passed_total",
			"UDP queries the fast path passed on to the ordinary path (not plain, not cached, too large, outside the zones).", nil, nil),
		filled: prometheus.NewDesc("skydns_dns_fast_path_fills_total",
			"Answers the fast path's caches computed with the ordinary path (cache misses); answers a new snapshot did not touch are kept.", nil, nil),
		dropped: prometheus.NewDesc("skydns_dns_fast_path_dropped_total",
			"UDP queries dropped because the ordinary path had a full queue of them.", nil, nil),
	}
}

// serve makes the collector export stats under the server label of addr,
// the DNS address.
func (c *answersCollector) serve(stats *fastpath.Stats, addr string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stats, c.server = stats, "dns://"+addr
}

// Describe sends the metrics' descriptions.
func (c *answersCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.requests, c.responses, c.duration, c.requestSize, c.responseSize,
		c.fastAnswers, c.passed, c.filled, c.dropped} {
		ch <- d
	}
}

// Collect sums the shards. Label sets show once counted, as with a
// CounterVec; nothing shows before DNS is served.
func (c *answersCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	stats, server := c.stats, c.server
	c.mu.Unlock()
	if stats == nil {
		return
	}
	t := stats.Totals()
	t.EachRequest(func(zone string, tr fastpath.Transport, qtype string, n uint64) {
		ch <- prometheus.MustNewConstMetric(c.requests, prometheus.CounterValue, float64(n), server, zone, tr.Proto(), tr.Family(), qtype)
	})
	t.EachResponse(func(zone, rcode string, n uint64) {
		ch <- prometheus.MustNewConstMetric(c.responses, prometheus.CounterValue, float64(n), server, zone, rcode, pluginLabel(zone))
	})
	t.EachLatency(func(zone, qtype string, h fastpath.Histogram) {
		ch <- prometheus.MustNewConstHistogram(c.duration, h.Count, h.Sum, h.Cumulative, server, zone, qtype)
	})
	for _, size := range []struct {
		response bool
		desc     *prometheus.Desc
	}{{false, c.requestSize}, {true, c.responseSize}} {
		t.EachSize(size.response, func(zone, proto string, h fastpath.Histogram) {
			ch <- prometheus.MustNewConstHistogram(size.desc, h.Count, h.Sum, h.Cumulative, server, zone, proto)
		})
	}
	for _, counter := range []struct {
		desc *prometheus.Desc
		n    uint64
	}{{c.fastAnswers, t.FastAnswers}, {c.passed, t.Passed}, {c.filled, t.Filled}, {c.dropped, t.Dropped}} {
		ch <- prometheus.MustNewConstMetric(counter.desc, prometheus.CounterValue, float64(counter.n))
	}
}
