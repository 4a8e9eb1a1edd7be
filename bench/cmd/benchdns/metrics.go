package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// metric reads one unlabelled sample from a Prometheus text endpoint.
func metric(ctx context.Context, url, name string) (float64, error) {
	text, err := scrape(ctx, url)
	if err != nil {
		return 0, err
	}
	return findMetric(strings.NewReader(text), name)
}

// findMetric returns the value of the line "name value".
func findMetric(r io.Reader, name string) (float64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), name+" ")
		if ok {
			return strconv.ParseFloat(strings.TrimSpace(rest), 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no metric %s", name)
}

// atRevision waits until skydns serves a snapshot at revision rev or later.
func atRevision(rev int64) func(ctx context.Context, inst *instance, timeout time.Duration) error {
	return func(ctx context.Context, inst *instance, timeout time.Duration) error {
		url := "http://" + inst.httpAddr + "/metrics"
		return poll(ctx, inst.proc, timeout, func() error {
			got, err := metric(ctx, url, "skydns_snapshot_revision")
			if err == nil && int64(got) < rev {
				err = fmt.Errorf("serving revision %.0f, want %d", got, rev)
			}
			return err
		})
	}
}
