package harness

import (
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"
)

// DaemonReadyTimeout bounds how long StartSkyDNS and StartKube2Sky wait for
// /readyz.
const DaemonReadyTimeout = 60 * time.Second

// Daemon is one of kubesky's own servers (skydns or kube2sky) run from bin/:
// a Process with an HTTP address serving /healthz, /readyz and /metrics.
type Daemon struct {
	// HTTPAddr is 127.0.0.1:<port> of /healthz, /readyz and /metrics.
	HTTPAddr string
	Process  *Process

	t testing.TB
}

var httpClient = &http.Client{Timeout: 2 * time.Second}

// Get fetches path (such as "/readyz") from the daemon and returns the
// status code and body.
func (d *Daemon) Get(path string) (int, string, error) {
	resp, err := httpClient.Get("http://" + d.HTTPAddr + path)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// Ready returns nil when /readyz answers 200, else an error with the status
// and body.
func (d *Daemon) Ready() error {
	code, body, err := d.Get("/readyz")
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return fmt.Errorf("%s /readyz: %d %s", d.Process.Name(), code, body)
	}
	return nil
}

// WaitReady polls /readyz until it answers 200, failing the test after
// timeout or when the process exits first.
func (d *Daemon) WaitReady(timeout time.Duration) {
	d.t.Helper()
	err := Poll(timeout, func() error {
		if err := d.Process.ErrIfExited(); err != nil {
			return err
		}
		return d.Ready()
	})
	if err != nil {
		d.t.Fatalf("%s not ready: %v", d.Process.Name(), err)
	}
}

// Metrics scrapes /metrics.
func (d *Daemon) Metrics() (Metrics, error) {
	return ScrapeMetrics("http://" + d.HTTPAddr + "/metrics")
}

// ScrapeMetrics fetches and parses a Prometheus text endpoint, such as a
// daemon's or etcd's /metrics.
func ScrapeMetrics(url string) (Metrics, error) {
	resp, err := httpClient.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %d", url, resp.StatusCode)
	}
	return ParseMetrics(string(body))
}

// Metric returns one series of /metrics (see Metrics.Value), failing the
// test when the scrape fails or the series is absent.
func (d *Daemon) Metric(series string) float64 {
	d.t.Helper()
	m, err := d.Metrics()
	if err != nil {
		d.t.Fatal(err)
	}
	v, ok := m[series]
	if !ok {
		d.t.Fatalf("%s /metrics has no series %s", d.Process.Name(), series)
	}
	return v
}

// daemonArgs are the flags both daemons get: the HTTP address, the etcd
// endpoint, then the caller's extra flags, which win over these (the last
// occurrence of a flag counts).
func daemonArgs(httpAddr, etcdEndpoint string, extra []string) []string {
	args := []string{"--http-addr=" + httpAddr, "--etcd-endpoints=" + etcdEndpoint}
	return append(args, extra...)
}
