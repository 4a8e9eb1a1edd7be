package dnsperf

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Result is what one dnsperf run reports.
type Result struct {
	Sent, Completed, Lost int
	// QPS is completed queries per second of run time.
	QPS float64
	// RunTime is dnsperf's measured run time.
	RunTime time.Duration
	// Avg is dnsperf's average latency.
	Avg time.Duration
	// P50 and P99 are percentiles of the per-response latencies; zero when
	// dnsperf ran without -v.
	P50, P99 time.Duration
	// Rcodes counts responses by response code and query type,
	// "NOERROR A"; filled from -v lines only.
	Rcodes map[string]int
}

// Parse reads dnsperf's output. Lines of -v ("> NOERROR name A 0.000123")
// feed the latency percentiles and Rcodes; the Statistics block the rest.
func Parse(r io.Reader) (Result, error) {
	res := Result{Rcodes: map[string]int{}}
	var latencies []time.Duration
	var seen int
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "> ") {
			if d, key, ok := parseResponse(line); ok {
				latencies = append(latencies, d)
				res.Rcodes[key]++
			}
			continue
		}
		n, err := res.parseStatistic(line)
		if err != nil {
			return res, err
		}
		seen += n
	}
	if err := sc.Err(); err != nil {
		return res, err
	}
	if seen < len(statistics) {
		return res, errors.New("dnsperf printed no complete Statistics block (did it fail to start?)")
	}
	res.P50, res.P99 = percentile(latencies, 0.50), percentile(latencies, 0.99)
	return res, nil
}

// parseResponse reads "> RCODE name type seconds".
func parseResponse(line string) (time.Duration, string, bool) {
	f := strings.Fields(line)
	if len(f) != 5 {
		return 0, "", false
	}
	secs, err := strconv.ParseFloat(f[4], 64)
	if err != nil {
		return 0, "", false
	}
	return seconds(secs), f[1] + " " + f[3], true
}

// statistics are the labels of the Statistics block Parse needs.
var statistics = []string{"Queries sent:", "Queries completed:", "Queries lost:",
	"Run time (s):", "Queries per second:", "Average Latency (s):"}

// parseStatistic fills the field of one Statistics line; it returns 1 if
// the line was one of them.
func (res *Result) parseStatistic(line string) (int, error) {
	line = strings.TrimSpace(line)
	for _, label := range statistics {
		rest, ok := strings.CutPrefix(line, label)
		if !ok {
			continue
		}
		word := strings.Fields(rest)
		if len(word) == 0 {
			return 0, fmt.Errorf("dnsperf line %q has no value", line)
		}
		return 1, res.set(label, word[0])
	}
	return 0, nil
}

func (res *Result) set(label, value string) error {
	v, err := strconv.ParseFloat(value, 64)
	if err != nil {
		return fmt.Errorf("dnsperf %s %q: %w", label, value, err)
	}
	switch label {
	case "Queries sent:":
		res.Sent = int(v)
	case "Queries completed:":
		res.Completed = int(v)
	case "Queries lost:":
		res.Lost = int(v)
	case "Run time (s):":
		res.RunTime = seconds(v)
	case "Queries per second:":
		res.QPS = v
	case "Average Latency (s):":
		res.Avg = seconds(v)
	}
	return nil
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// percentile returns the p-quantile (0 < p ≤ 1) by the nearest-rank method;
// zero for no samples. It sorts ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	rank := int(p*float64(len(ds))+0.999999) - 1
	return ds[max(0, min(rank, len(ds)-1))]
}
