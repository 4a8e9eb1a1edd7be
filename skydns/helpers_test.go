package skydns

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/etcdstore/etcdtest"
)

// testConfig is a valid config for a daemon on free 127.0.0.1 ports,
// reading the etcd at url, with short timeouts so outages show quickly.
func testConfig(url string) Config {
	cfg := DefaultConfig()
	cfg.DNSAddr = "127.0.0.1:0"
	cfg.HTTPAddr = "127.0.0.1:0"
	cfg.Etcd.Endpoints = []string{url}
	cfg.Etcd.DialTimeout = time.Second
	cfg.Etcd.RequestTimeout = 2 * time.Second
	cfg.EtcdProbeInterval = 100 * time.Millisecond
	cfg.ShutdownTimeout = 5 * time.Second
	cfg.Forwarder = Refuse // tests that forward set their own upstream
	return cfg
}

// startDaemon starts a daemon with cfg, stopped when the test ends.
func startDaemon(t testing.TB, cfg Config) *Daemon {
	t.Helper()
	if err := cfg.Validate(); err != nil {
		t.Fatalf("test config invalid: %v", err)
	}
	d, err := Start(cfg, testLogger(t))
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := d.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return d
}

// startWithEtcd starts an embedded etcd and a daemon reading it.
func startWithEtcd(t *testing.T) (*etcdtest.Server, *Daemon) {
	t.Helper()
	etcd := etcdtest.Start(t)
	return etcd, startDaemon(t, testConfig(etcd.ClientURL()))
}

func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// put stores a record at the key of name plus one label.
func put(t testing.TB, etcd *etcdtest.Server, name, label, value string) int64 {
	t.Helper()
	return etcd.Put(t, contract.Key(contract.DefaultPrefix, name)+"/"+label, value)
}

// answerIs describes how resp differs from rcode with exactly the given
// record data (A/AAAA addresses, CNAME targets, TXT text), in any order.
func answerIs(resp *dns.Msg, rcode int, want ...string) string {
	got := answerData(resp)
	if resp.Rcode != rcode || strings.Join(sorted(got), " ") != strings.Join(sorted(want), " ") {
		return "answered " + dns.RcodeToString[resp.Rcode] + " " + strings.Join(got, " ") +
			", want " + dns.RcodeToString[rcode] + " " + strings.Join(want, " ")
	}
	return ""
}

func answerData(m *dns.Msg) []string {
	var out []string
	for _, rr := range m.Answer {
		out = append(out, strings.TrimPrefix(rr.String(), rr.Header().String()))
	}
	return out
}

func sorted(s []string) []string {
	s = append([]string(nil), s...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}

// httpGet returns the status and body of a GET on the daemon's HTTP port.
func httpGet(t *testing.T, d *Daemon, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + d.HTTPAddr() + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return resp.StatusCode, string(body)
}

// metric returns the value of the sample named series (with its labels,
// as in the text format) on /metrics, or -1 when it is absent.
func metric(t *testing.T, d *Daemon, series string) float64 {
	t.Helper()
	_, body := httpGet(t, d, "/metrics")
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), series+" ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(rest, 64)
		if err != nil {
			t.Fatalf("metric %s: %v", series, err)
		}
		return v
	}
	return -1
}

// metricSum is the sum of the series of the metric name that have every
// label pair given (as `label="value"`); -1 when there is none.
func metricSum(t *testing.T, d *Daemon, name string, labels ...string) float64 {
	t.Helper()
	_, body := httpGet(t, d, "/metrics")
	sum, found := 0.0, false
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), name+"{")
		if !ok || !hasLabels(rest, labels) {
			continue
		}
		v, err := strconv.ParseFloat(rest[strings.LastIndexByte(rest, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("metric %s: %v", name, err)
		}
		sum, found = sum+v, true
	}
	if !found {
		return -1
	}
	return sum
}

func hasLabels(series string, labels []string) bool {
	for _, l := range labels {
		if !strings.Contains(series, l) {
			return false
		}
	}
	return true
}

// logBuffer is a concurrency-safe log sink for asserting on log lines.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *logBuffer) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.b.String(), s)
}
