package kube2sky

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

func TestHealthReadinessAndMetricsAreServed(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := h.start("a")
	leader := httptest.NewServer(a.Handler())
	t.Cleanup(leader.Close)
	h.waitLeader(a)
	b := h.start("b")
	standby := httptest.NewServer(b.Handler())
	t.Cleanup(standby.Close)
	h.waitStandby(b)

	if code, body := get(t, leader.URL+"/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz = %d %q", code, body)
	}
	if code, body := get(t, leader.URL+"/readyz"); code != 200 || body != "ok: leader\n" {
		t.Errorf("leader /readyz = %d %q", code, body)
	}
	if code, body := get(t, standby.URL+"/readyz"); code != 200 || body != "ok: standby\n" {
		t.Errorf("standby /readyz = %d %q", code, body)
	}
	_, metrics := get(t, leader.URL+"/metrics")
	for _, want := range []string{
		"kube2sky_records_written_total 1", "kube2sky_records_deleted_total 0", "kube2sky_etcd_txns_total 1",
		"kube2sky_queue_depth 0", "kube2sky_leader 1", "kube2sky_etcd_reachable 1",
		"kube2sky_reconcile_duration_seconds_count{scope=\"full\"} 1", "kube2sky_dns_programming_latency_seconds_count 0",
	} {
		if !strings.Contains(metrics, want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

func TestPprofIsServedOnlyWithTheFlag(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, pprof := range []bool{false, true} {
		cfg := testConfig(h.etcd.ClientURL())
		cfg.Pprof = pprof
		c, err := New(cfg, h.kube, h.etcd.Client, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.queue.ShutDown) // Run, never called here, would stop it
		srv := httptest.NewServer(c.Handler())
		t.Cleanup(srv.Close)
		want := map[bool]int{false: 404, true: 200}[pprof]
		if code, _ := get(t, srv.URL+"/debug/pprof/"); code != want {
			t.Errorf("--pprof=%v: /debug/pprof/ = %d, want %d", pprof, code, want)
		}
	}
}

func TestNotReadyBeforeTheInformersSync(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c, err := New(testConfig(h.etcd.ClientURL()), h.kube, h.etcd.Client, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.queue.ShutDown) // Run, never called here, would stop it
	srv := httptest.NewServer(c.Handler())
	t.Cleanup(srv.Close)
	if code, body := get(t, srv.URL+"/readyz"); code != 503 || !strings.Contains(body, "informers not synced") {
		t.Errorf("/readyz = %d %q", code, body)
	}
}

func TestProgrammingLatencyStartsAtTheSliceTriggerTime(t *testing.T) {
	t.Parallel()
	h, a := startLeader(t)
	h.create(headless("default", "db"))
	slice := endpointSlice("default", "db", "db-1", nil, ep{"10.244.1.7", "", true})
	slice.Annotations = map[string]string{corev1.EndpointsLastChangeTriggerTime: time.Now().Add(-3 * time.Second).Format(time.RFC3339Nano)}
	h.create(slice)
	h.waitContents(
		"/skydns/arpa/in-addr/10/244/1/7 "+v("10-244-1-7.db.default.svc.cluster.local."),
		svcKey+"default/db/10-244-1-7 "+v("10.244.1.7"),
	)
	// The Service's own change is observed too (milliseconds), and which
	// sync writes the slice's records depends on when its event arrives; the
	// slice's change is observed from its trigger time either way.
	h.eventually("the slice's latency is observed", func() error {
		if sum := histogramSum(a.metrics.programming); sum < 3 {
			return errorf("latency sum %vs", sum)
		}
		return nil
	})
	if sum := histogramSum(a.metrics.programming); sum > 13 {
		t.Errorf("programming latency %vs, want from the trigger time 3s ago", sum)
	}
}
