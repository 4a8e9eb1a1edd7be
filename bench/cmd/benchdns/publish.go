package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/kubesky/kubesky/bench/report"
)

// publishMetric is skydns's histogram of snapshot publish times.
const publishMetric = "skydns_snapshot_publish_seconds"

// applyStats is what skydns's metrics say about its snapshots at one
// moment: the publish histograms and the watch events applied.
type applyStats struct {
	list, watch report.Histogram
	events      float64
}

// readApplyStats scrapes the apply metrics of skydns at inst.
func readApplyStats(ctx context.Context, inst *instance) (applyStats, error) {
	text, err := scrape(ctx, "http://"+inst.httpAddr+"/metrics")
	if err != nil {
		return applyStats{}, err
	}
	var s applyStats
	if s.list, err = histogramOf(text, publishMetric, `update="list"`); err != nil {
		return s, err
	}
	if s.watch, err = histogramOf(text, publishMetric, `update="watch"`); err != nil {
		return s, err
	}
	s.events, err = findMetric(strings.NewReader(text), "skydns_watch_events_applied_total")
	return s, err
}

// listPublish is the mean time of the list publishes counted in s.
func (s applyStats) listPublish() time.Duration {
	if s.list.Count == 0 {
		return 0
	}
	return time.Duration(s.list.Sum / s.list.Count * float64(time.Second))
}

// scrape fetches a Prometheus text endpoint, within 2 seconds.
func scrape(ctx context.Context, url string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// histogramOf parses the series name{labels} of a histogram from a
// Prometheus text exposition. A series never observed is empty, not an
// error (a labelled histogram shows no lines before its first
// observation).
func histogramOf(text, name, labels string) (report.Histogram, error) {
	var h report.Histogram
	bucket, sum, count := name+"_bucket{"+labels+`,le="`, name+"_sum{"+labels+"} ", name+"_count{"+labels+"} "
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		var err error
		switch {
		case strings.HasPrefix(line, bucket):
			err = addBucket(&h, strings.TrimPrefix(line, bucket))
		case strings.HasPrefix(line, sum):
			h.Sum, err = strconv.ParseFloat(strings.TrimPrefix(line, sum), 64)
		case strings.HasPrefix(line, count):
			h.Count, err = strconv.ParseFloat(strings.TrimPrefix(line, count), 64)
		}
		if err != nil {
			return h, fmt.Errorf("%s{%s}: %q: %w", name, labels, line, err)
		}
	}
	return h, nil
}

// addBucket adds one bucket line's rest, `<bound>"} <count>`.
func addBucket(h *report.Histogram, rest string) error {
	bound, value, ok := strings.Cut(rest, `"} `)
	if !ok {
		return fmt.Errorf("not a bucket")
	}
	le, err := strconv.ParseFloat(bound, 64) // "+Inf" parses
	if err != nil {
		return err
	}
	n, err := strconv.ParseFloat(value, 64)
	h.Bounds, h.Counts = append(h.Bounds, le), append(h.Counts, n)
	return err
}

// countApplied fills in what skydns counted during a burst: the watch
// events applied and the publish time of each revision since before.
func countApplied(ctx context.Context, inst *instance, before applyStats, res *report.Burst) error {
	after, err := readApplyStats(ctx, inst)
	if err != nil {
		return err
	}
	res.EventsApplied = after.events - before.events
	res.Publish = after.watch.Sub(before.watch)
	return nil
}
