package harness

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Prometheus is a Prometheus server (the system's `prometheus` binary,
// Debian's package) started by StartPrometheus: it scrapes its targets
// every second and evaluates its rule files every second.
type Prometheus struct {
	Addr    string // 127.0.0.1:<port> of the HTTP API
	Process *Process
}

// PrometheusBinary is the path of the prometheus binary on PATH, or "" when
// there is none.
func PrometheusBinary() string {
	path, err := exec.LookPath("prometheus")
	if err != nil {
		return ""
	}
	return path
}

// StartPrometheus runs prometheus on a free port of 127.0.0.1 with its
// storage under t.TempDir(), scraping every job's targets (host:port of a
// /metrics) and loading ruleFiles, and waits until it is ready.
func StartPrometheus(t testing.TB, jobs map[string][]string, ruleFiles ...string) *Prometheus {
	t.Helper()
	binary := PrometheusBinary()
	if binary == "" {
		t.Fatal("no prometheus binary on PATH (apt-get install prometheus)")
	}
	dir := t.TempDir()
	config := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(config, prometheusConfig(jobs, ruleFiles), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &Prometheus{Addr: HostPort(FreePort(t))}
	p.Process = StartProcess(t, ProcessSpec{Name: "prometheus@" + p.Addr, Path: binary, Args: []string{
		"--config.file=" + config, "--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + p.Addr, "--log.level=warn",
	}})
	Eventually(t, DaemonReadyTimeout, func() error {
		if err := p.Process.ErrIfExited(); err != nil {
			return err
		}
		_, err := p.get("/-/ready", nil)
		return err
	})
	return p
}

// prometheusConfig is a prometheus.yml scraping jobs each second, with
// ruleFiles (absolute paths or relative to the test's directory).
func prometheusConfig(jobs map[string][]string, ruleFiles []string) []byte {
	var b strings.Builder
	b.WriteString("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n")
	if len(ruleFiles) > 0 {
		b.WriteString("rule_files:\n")
		for _, f := range ruleFiles {
			abs, _ := filepath.Abs(f)
			fmt.Fprintf(&b, "  - %q\n", abs)
		}
	}
	b.WriteString("scrape_configs:\n")
	for job, targets := range jobs {
		quoted := make([]string, len(targets))
		for i, target := range targets {
			quoted[i] = fmt.Sprintf("%q", target)
		}
		fmt.Fprintf(&b, "  - job_name: %q\n    static_configs:\n      - targets: [%s]\n", job, strings.Join(quoted, ", "))
	}
	return []byte(b.String())
}

// Sample is one series of an instant query's result.
type Sample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"` // [unix time, "value"]
}

// Query evaluates the PromQL expr now through /api/v1/query and returns
// the result's series (a scalar result is one series without labels). An
// expression Prometheus rejects is an error with its message.
func (p *Prometheus) Query(expr string) ([]Sample, error) {
	body, err := p.get("/api/v1/query", url.Values{"query": {expr}})
	if err != nil {
		return nil, err
	}
	var resp struct {
		Data struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, fmt.Errorf("query %q: %w", expr, err)
	}
	if resp.Data.ResultType == "scalar" {
		var s Sample
		return []Sample{s}, json.Unmarshal(resp.Data.Result, &s.Value)
	}
	var samples []Sample
	return samples, json.Unmarshal(resp.Data.Result, &samples)
}

// Rule is one rule of /api/v1/rules: its name, expression, health ("ok",
// "err", "unknown" before its first evaluation) and last error.
type Rule struct {
	Name      string `json:"name"`
	Query     string `json:"query"`
	Health    string `json:"health"`
	LastError string `json:"lastError"`
	Type      string `json:"type"`
}

// Rules lists the loaded rules with their health.
func (p *Prometheus) Rules() ([]Rule, error) {
	body, err := p.get("/api/v1/rules", nil)
	if err != nil {
		return nil, err
	}
	var resp struct {
		Data struct {
			Groups []struct {
				Rules []Rule `json:"rules"`
			} `json:"groups"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, err
	}
	var rules []Rule
	for _, g := range resp.Data.Groups {
		rules = append(rules, g.Rules...)
	}
	return rules, nil
}

var prometheusClient = &http.Client{Timeout: 10 * time.Second}

// get fetches path with query from the HTTP API; a status other than 200 is
// an error carrying the body (the API's error message).
func (p *Prometheus) get(path string, query url.Values) ([]byte, error) {
	u := "http://" + p.Addr + path
	if query != nil {
		u += "?" + query.Encode()
	}
	resp, err := prometheusClient.Get(u)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %d %s", path, resp.StatusCode, body)
	}
	return body, nil
}
