package skydns

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubesky/kubesky/skydns/fastpath"
)

// answersCollector exports a fastpath.Stats: the answers and latencies of
// both paths, and what the fast path passed on or dropped. Counting costs
// the DNS paths a few atomic adds; the sums are made here, on scrape.
type answersCollector struct {
	stats                        *fastpath.Stats
	requests, duration           *prometheus.Desc
	fastAnswers, passed, dropped *prometheus.Desc
	filled                       *prometheus.Desc
}

func newAnswersCollector(stats *fastpath.Stats) *answersCollector {
	return &answersCollector{
		stats: stats,
		requests: prometheus.NewDesc("skydns_dns_requests_total",
			"DNS queries answered, by query type and response code.", []string{"qtype", "rcode"}, nil),
		duration: prometheus.NewDesc("skydns_dns_request_duration_seconds",
			"Time from reading a query to writing its answer (the fast path times a batch and counts it for each query in it).", []string{"proto"}, nil),
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

// Describe sends the metrics' descriptions.
func (c *answersCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.requests, c.duration, c.fastAnswers, c.passed, c.filled, c.dropped} {
		ch <- d
	}
}

// Collect sums the shards. Label sets show once counted, as with a
// CounterVec.
func (c *answersCollector) Collect(ch chan<- prometheus.Metric) {
	c.stats.EachAnswer(func(qtype, rcode string, n uint64) {
		ch <- prometheus.MustNewConstMetric(c.requests, prometheus.CounterValue, float64(n), qtype, rcode)
	})
	for _, proto := range []string{"udp", "tcp"} {
		if count, sum, buckets := c.stats.Latency(proto); count > 0 {
			ch <- prometheus.MustNewConstHistogram(c.duration, count, sum, buckets, proto)
		}
	}
	ch <- prometheus.MustNewConstMetric(c.fastAnswers, prometheus.CounterValue, float64(c.stats.FastAnswers()))
	ch <- prometheus.MustNewConstMetric(c.passed, prometheus.CounterValue, float64(c.stats.Passed()))
	ch <- prometheus.MustNewConstMetric(c.filled, prometheus.CounterValue, float64(c.stats.Filled()))
	ch <- prometheus.MustNewConstMetric(c.dropped, prometheus.CounterValue, float64(c.stats.Dropped()))
}
