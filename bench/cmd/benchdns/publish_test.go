package main

import (
	"math"
	"testing"
)

const publishText = `# TYPE skydns_snapshot_publish_seconds histogram
skydns_snapshot_publish_seconds_bucket{update="list",le="0.5"} 0
skydns_snapshot_publish_seconds_bucket{update="list",le="+Inf"} 1
skydns_snapshot_publish_seconds_sum{update="list"} 0.75
skydns_snapshot_publish_seconds_count{update="list"} 1
skydns_snapshot_publish_seconds_bucket{update="watch",le="0.5"} 3
skydns_snapshot_publish_seconds_bucket{update="watch",le="+Inf"} 4
skydns_snapshot_publish_seconds_sum{update="watch"} 1.25
skydns_snapshot_publish_seconds_count{update="watch"} 4
skydns_watch_events_applied_total 7
`

func TestHistogramOfReadsOneLabelledSeries(t *testing.T) {
	h, err := histogramOf(publishText, publishMetric, `update="watch"`)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Bounds) != 2 || h.Bounds[0] != 0.5 || !math.IsInf(h.Bounds[1], 1) || h.Counts[0] != 3 || h.Counts[1] != 4 ||
		h.Sum != 1.25 || h.Count != 4 {
		t.Fatalf("watch histogram %+v", h)
	}
}

func TestHistogramOfAnUnobservedSeriesIsEmpty(t *testing.T) {
	h, err := histogramOf(publishText, publishMetric, `update="other"`)
	if err != nil || h.Count != 0 || len(h.Bounds) != 0 {
		t.Fatalf("got %+v, %v; want an empty histogram", h, err)
	}
}

func TestHistogramOfRejectsABadCount(t *testing.T) {
	bad := `skydns_snapshot_publish_seconds_bucket{update="list",le="0.5"} many` + "\n"
	if _, err := histogramOf(bad, publishMetric, `update="list"`); err == nil {
		t.Fatal("want an error for a count that is not a number")
	}
}
