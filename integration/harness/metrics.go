package harness

import (
	"fmt"
	"strconv"
	"strings"
)

// Metrics are the samples of a Prometheus text exposition, keyed by series
// as exposed: the metric name, then its labels if any, as in
// `kube2sky_leader` or `skydns_dns_responses_total{plugin="skydns",rcode="NOERROR",zone="cluster.local."}`.
type Metrics map[string]float64

// ParseMetrics reads the Prometheus text format: comment lines are skipped,
// every other line is a series and a value (an optional timestamp after the
// value is ignored).
func ParseMetrics(text string) (Metrics, error) {
	m := Metrics{}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		series, value, err := parseSample(line)
		if err != nil {
			return nil, fmt.Errorf("metrics line %d %q: %w", i+1, line, err)
		}
		m[series] = value
	}
	return m, nil
}

// parseSample splits `name{labels} value [timestamp]`; label values may
// hold spaces, so the series ends at the closing brace when there is one.
func parseSample(line string) (string, float64, error) {
	end := strings.IndexByte(line, ' ')
	if brace := strings.LastIndexByte(line, '}'); brace >= 0 {
		end = brace + 1
	}
	if end <= 0 || end >= len(line) {
		return "", 0, fmt.Errorf("no value")
	}
	fields := strings.Fields(line[end:])
	if len(fields) == 0 {
		return "", 0, fmt.Errorf("no value")
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	return line[:end], v, err
}

// Sum adds the values of every series of the named metric, whatever their
// labels.
func (m Metrics) Sum(name string) float64 {
	var total float64
	for series, v := range m {
		if series == name || strings.HasPrefix(series, name+"{") {
			total += v
		}
	}
	return total
}
