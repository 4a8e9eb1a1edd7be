package skydns

import (
	"log/slog"
	"testing"

	dto "github.com/prometheus/client_model/go"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/etcdstore/etcdtest"
)

func TestMirrorCountsPublishesAndWatchEvents(t *testing.T) {
	etcd := etcdtest.Start(t)
	put(t, etcd, web, "a", `{"host":"10.0.0.1"}`)
	put(t, etcd, web, "b", `{"host":"10.0.0.2"}`)
	metrics := NewMetrics(func() float64 { return 0 })
	m := runCountedMirror(t, etcd.Client, metrics, slog.New(slog.DiscardHandler))
	waitHosts(t, m, web, "[10.0.0.1 10.0.0.2]")

	key := contract.Key(contract.DefaultPrefix, web)
	_, err := etcd.Client.Txn(t.Context()).Then(
		clientv3.OpPut(key+"/c", `{"host":"10.0.0.3"}`),
		clientv3.OpPut(key+"/d", `{"host":"10.0.0.4"}`),
		clientv3.OpDelete(key+"/a"),
	).Commit()
	if err != nil {
		t.Fatalf("txn: %v", err)
	}
	waitHosts(t, m, web, "[10.0.0.2 10.0.0.3 10.0.0.4]")

	t.Run("the three events of the transaction are counted, the listed records are not", func(t *testing.T) {
		if got := sample(t, metrics, "skydns_watch_events_applied_total", "").GetCounter().GetValue(); got != 3 {
			t.Fatalf("skydns_watch_events_applied_total = %v, want 3", got)
		}
	})
	t.Run("one list and one watched revision were timed", func(t *testing.T) {
		for update, want := range map[string]int{"list": 1, "watch": 1} {
			h := sample(t, metrics, "skydns_snapshot_publish_seconds", update).GetHistogram()
			if got := int(h.GetSampleCount()); got != want {
				t.Fatalf("skydns_snapshot_publish_seconds{update=%q} count %d, want %d", update, got, want)
			}
			if h.GetSampleSum() <= 0 {
				t.Fatalf("skydns_snapshot_publish_seconds{update=%q} sum %v, want a duration", update, h.GetSampleSum())
			}
		}
	})
}

// sample is the gathered series of the metric name whose first label has
// the value label ("" for a metric without labels); a test failure if none.
func sample(t *testing.T, m *Metrics, name, label string) *dto.Metric {
	t.Helper()
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, s := range f.GetMetric() {
			if label == "" || s.GetLabel()[0].GetValue() == label {
				return s
			}
		}
	}
	t.Fatalf("no series %s{%s}", name, label)
	return nil
}

// TestAListedMalformedValueIsCountedOnceAndSkipped: the first list, built
// as its keys arrive, skips a malformed value and counts it.
func TestAListedMalformedValueIsCountedOnceAndSkipped(t *testing.T) {
	etcd := etcdtest.Start(t)
	put(t, etcd, web, "a", `{"host":"10.0.0.1"}`)
	put(t, etcd, web, "b", `not json`)
	metrics := NewMetrics(func() float64 { return 0 })
	m := runCountedMirror(t, etcd.Client, metrics, slog.New(slog.DiscardHandler))
	waitHosts(t, m, web, "[10.0.0.1]")
	for name, want := range map[string]float64{"skydns_malformed_values_total": 1, "skydns_malformed_values": 1} {
		s := sample(t, metrics, name, "")
		if got := s.GetCounter().GetValue() + s.GetGauge().GetValue(); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
}
