package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubesky/kubesky/integration/harness"
	"github.com/kubesky/kubesky/internal/dnstest"
)

// The monitoring files this test checks against a real Prometheus.
const (
	dashboardFile      = "../deploy/monitoring/kubesky-dashboard.json"
	rulesFile          = "../deploy/monitoring/kubesky-rules.yaml"
	prometheusRuleFile = "../deploy/monitoring/kubesky-prometheusrule.yaml"
	monitoringDoc      = "../docs/monitoring.md"
)

// requirePrometheus skips the test, saying why, when there is no
// prometheus binary — except under CI=true, where the test must run.
func requirePrometheus(t *testing.T) {
	t.Helper()
	if harness.PrometheusBinary() != "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no prometheus binary on PATH and CI=true: apt-get install prometheus")
	}
	t.Skip("no prometheus binary on PATH (apt-get install prometheus); skipped outside CI")
}

// TestMonitoringPanelsAndAlertsWorkOnRealMetrics runs the whole pipeline
// under load — DNS queries of every kind, forwarded names against an
// upstream that fails some, Services created and changed — with a real
// Prometheus scraping skydns and kube2sky and loading the alert rules.
// Every query of every dashboard panel must return data, and every alert
// expression must evaluate without error (firing or not).
func TestMonitoringPanelsAndAlertsWorkOnRealMetrics(t *testing.T) {
	requirePrometheus(t)
	upstream := dnstest.StartServer(t, dns.HandlerFunc(okOrServfailUpstream))
	s := startStack(t, stackOptions{skydnsArgs: []string{"--upstream=" + upstream}})
	prom := harness.StartPrometheus(t, map[string][]string{
		"skydns": {s.skydns.HTTPAddr}, "kube2sky": {s.kube2sky.HTTPAddr},
	}, rulesFile)

	for i := range monitoredServices {
		createService(t, s.kube, "default", monitoredService(i), "")
	}
	ctx, stop := context.WithTimeout(t.Context(), 3*time.Minute)
	defer stop()
	var load sync.WaitGroup
	load.Go(func() { sendQueries(ctx, s.skydns.DNSAddr) })
	load.Go(func() { changeServices(ctx, s) })

	panels := dashboardQueries(t)
	t.Run("every panel query returns data", func(t *testing.T) {
		harness.Eventually(t, 2*time.Minute, func() error { return allReturnData(prom, panels) })
		t.Logf("%d panel queries returned data", len(panels))
	})
	t.Run("CoreDNS's queries work with skydns_ for coredns_", func(t *testing.T) {
		checkCoreDNSShape(t, prom, "dns://"+s.skydns.DNSAddr)
	})
	stop()
	load.Wait()

	alerts := alertRules(t)
	t.Run("every alert expression evaluates", func(t *testing.T) {
		for _, a := range alerts {
			if _, err := prom.Query(a.Expr); err != nil {
				t.Errorf("alert %s: %v", a.Alert, err)
			}
		}
	})
	t.Run("Prometheus evaluated every rule without error", func(t *testing.T) {
		harness.Eventually(t, 30*time.Second, func() error { return rulesHealthy(prom, len(alerts)) })
	})
}

// checkCoreDNSShape evaluates queries written for CoreDNS's metrics, with
// the prefix swapped, and checks the labels they group by carry skydns's
// values.
func checkCoreDNSShape(t *testing.T, prom *harness.Prometheus, server string) {
	queries := map[string][]string{
		`sum by (server, zone, proto, family, type) (rate(skydns_dns_requests_total[1m]))`:                            {"server", "zone", "proto", "family", "type"},
		`sum by (server, zone, rcode, plugin) (rate(skydns_dns_responses_total{rcode="SERVFAIL"}[1m]))`:               {"server", "zone", "rcode", "plugin"},
		`histogram_quantile(0.99, sum by (server, zone, le) (rate(skydns_dns_request_duration_seconds_bucket[1m])))`:  {"server", "zone"},
		`histogram_quantile(0.5, sum by (server, zone, proto, le) (rate(skydns_dns_response_size_bytes_bucket[1m])))`: {"server", "zone", "proto"},
	}
	for expr, labels := range queries {
		samples, err := prom.Query(expr)
		if err != nil || len(samples) == 0 {
			t.Errorf("%s: %d series, error %v", expr, len(samples), err)
			continue
		}
		for _, label := range labels {
			if samples[0].Metric[label] == "" {
				t.Errorf("%s: no %s label in %v", expr, label, samples[0].Metric)
			}
		}
		if got := samples[0].Metric["server"]; got != server {
			t.Errorf("%s: server %q, want %q", expr, got, server)
		}
	}
}

// panelQuery is one query of a dashboard panel.
type panelQuery struct {
	panel, expr string
}

// dashboardQueries reads every panel's target expressions, with Grafana's
// $__rate_interval made a window of a minute (the test scrapes every
// second).
func dashboardQueries(t *testing.T) []panelQuery {
	t.Helper()
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	var queries []panelQuery
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, target := range p.Targets {
			queries = append(queries, panelQuery{p.Title, strings.ReplaceAll(target.Expr, "$__rate_interval", "1m")})
		}
	}
	if len(queries) == 0 {
		t.Fatalf("%s has no panel queries", dashboardFile)
	}
	return queries
}

// allReturnData is nil when every query returns at least one series.
func allReturnData(prom *harness.Prometheus, queries []panelQuery) error {
	var empty []string
	for _, q := range queries {
		samples, err := prom.Query(q.expr)
		if err != nil {
			return fmt.Errorf("panel %q: %w", q.panel, err)
		}
		if len(samples) == 0 {
			empty = append(empty, fmt.Sprintf("%q: %s", q.panel, q.expr))
		}
	}
	if len(empty) > 0 {
		return fmt.Errorf("panel queries without data:\n%s", strings.Join(empty, "\n"))
	}
	return nil
}

// alertRule is one rule of a rules file.
type alertRule struct {
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	Annotations map[string]string `json:"annotations"`
}

// ruleGroups is the groups of a Prometheus rules file.
type ruleGroups struct {
	Groups []struct {
		Name  string      `json:"name"`
		Rules []alertRule `json:"rules"`
	} `json:"groups"`
}

func (g ruleGroups) rules() []alertRule {
	var rules []alertRule
	for _, group := range g.Groups {
		rules = append(rules, group.Rules...)
	}
	return rules
}

func alertRules(t *testing.T) []alertRule {
	t.Helper()
	var groups ruleGroups
	readYAML(t, rulesFile, &groups)
	rules := groups.rules()
	if len(rules) == 0 {
		t.Fatalf("%s has no rules", rulesFile)
	}
	return rules
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// rulesHealthy is nil once Prometheus has loaded want alerting rules and
// evaluated each without error.
func rulesHealthy(prom *harness.Prometheus, want int) error {
	rules, err := prom.Rules()
	if err != nil {
		return err
	}
	if len(rules) != want {
		return fmt.Errorf("Prometheus loaded %d rules, want %d", len(rules), want)
	}
	for _, r := range rules {
		if r.Health != "ok" {
			return fmt.Errorf("rule %s: health %q %s", r.Name, r.Health, r.LastError)
		}
	}
	return nil
}

// okOrServfailUpstream is what skydns forwards to: A 192.0.2.1 for names
// under ok.example., SERVFAIL for every other name.
func okOrServfailUpstream(w dns.ResponseWriter, req *dns.Msg) {
	resp := new(dns.Msg).SetReply(req)
	if q := req.Question[0]; dns.IsSubDomain("ok.example.", q.Name) && q.Qtype == dns.TypeA {
		resp.Answer = []dns.RR{&dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 1}, A: net.IPv4(192, 0, 2, 1)}}
	} else {
		resp.Rcode = dns.RcodeServerFailure
	}
	w.WriteMsg(resp)
}

// sendQueries asks addr, until ctx ends, a mix that gives every panel
// data: names in the zone (NOERROR, NXDOMAIN, SRV) over UDP and TCP, a
// PTR, and forwarded names the upstream answers or fails (SERVFAIL).
func sendQueries(ctx context.Context, addr string) {
	questions := []struct {
		transport, name string
		qtype           uint16
	}{
		{"udp", "kubernetes.default.svc.cluster.local.", dns.TypeA},
		{"udp", "missing.default.svc.cluster.local.", dns.TypeA},
		{"udp", "_https._tcp.kubernetes.default.svc.cluster.local.", dns.TypeSRV},
		{"tcp", "kubernetes.default.svc.cluster.local.", dns.TypeAAAA},
		{"udp", "1.0.96.10.in-addr.arpa.", dns.TypePTR},
		{"udp", "www.ok.example.", dns.TypeA},
		{"udp", "www.fails.example.", dns.TypeA},
	}
	for i := 0; ctx.Err() == nil && i < 200_000; i++ { // bounded: a few hundred per second at most
		q := questions[i%len(questions)]
		harness.Query(addr, q.transport, q.name, q.qtype) // answers are checked by other tests; here only the metrics matter
		if i%len(questions) == 0 {
			select {
			case <-ctx.Done():
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
}

// The Services changeServices changes.
const monitoredServices = 5

func monitoredService(i int) string { return fmt.Sprintf("mon-%d", i%monitoredServices) }

// changeServices changes the monitored Services' ports, one change a
// second until ctx ends, so that kube2sky programs records all along.
func changeServices(ctx context.Context, s *stack) {
	for i := 0; i < 600; i++ { // bounded: one change a second for at most 10 minutes
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
		svcs := s.kube.CoreV1().Services("default")
		svc, err := svcs.Get(ctx, monitoredService(i), metav1.GetOptions{})
		if err != nil {
			continue // ctx ended
		}
		svc.Spec.Ports[0].Port = int32(8000 + i%1000)
		svcs.Update(ctx, svc, metav1.UpdateOptions{})
	}
}

// TestPrometheusRuleHoldsTheRulesFile keeps the PrometheusRule custom
// resource the same as the plain rules file.
func TestPrometheusRuleHoldsTheRulesFile(t *testing.T) {
	var plain ruleGroups
	readYAML(t, rulesFile, &plain)
	var resource struct {
		Kind string     `json:"kind"`
		Spec ruleGroups `json:"spec"`
	}
	readYAML(t, prometheusRuleFile, &resource)
	if resource.Kind != "PrometheusRule" {
		t.Fatalf("%s: kind %q, want PrometheusRule", prometheusRuleFile, resource.Kind)
	}
	a, _ := json.Marshal(plain)
	b, _ := json.Marshal(resource.Spec)
	if string(a) != string(b) {
		t.Fatalf("the groups of %s differ from %s's: copy them over", prometheusRuleFile, rulesFile)
	}
}

// TestEveryAlertHasARunbook checks that every alert's runbook_url points
// at a section of docs/monitoring.md.
func TestEveryAlertHasARunbook(t *testing.T) {
	doc, err := os.ReadFile(monitoringDoc)
	if err != nil {
		t.Fatal(err)
	}
	var anchors []string
	for _, line := range strings.Split(string(doc), "\n") {
		if heading, ok := strings.CutPrefix(line, "### "); ok {
			anchors = append(anchors, strings.ToLower(strings.TrimSpace(heading)))
		}
	}
	const prefix = "https://github.com/kubesky/kubesky/blob/main/docs/monitoring.md#"
	for _, a := range alertRules(t) {
		anchor, ok := strings.CutPrefix(a.Annotations["runbook_url"], prefix)
		if !ok || !slices.Contains(anchors, anchor) {
			t.Errorf("alert %s: runbook_url %q is not a ### section of %s", a.Alert, a.Annotations["runbook_url"], monitoringDoc)
		}
		if a.Annotations["summary"] == "" || a.Annotations["description"] == "" {
			t.Errorf("alert %s: no summary or description", a.Alert)
		}
	}
}
