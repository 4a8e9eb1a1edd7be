# The dashboard and alert rules of deploy/monitoring, checked with real parts: promtool (Debian's
# prometheus package) checks and unit-tests the rules, and an integration test runs a real
# Prometheus against kube-apiserver, etcd, kube2sky and skydns under load. See docs/monitoring.md.

MONITORING_DIR := deploy/monitoring

.PHONY: test-monitoring

test-monitoring: build tools ## alert rules (promtool check/test) and every dashboard panel and alert on a real Prometheus (~2 min; apt-get install prometheus)
	@command -v promtool >/dev/null || { echo "promtool missing: apt-get install prometheus" >&2; exit 1; }
	promtool check rules $(MONITORING_DIR)/kubesky-rules.yaml
	cd $(MONITORING_DIR) && promtool test rules kubesky-rules-test.yaml
	$(GO) test -count=1 -timeout 10m -run 'TestMonitoring|TestPrometheusRule|TestEveryAlertHasARunbook' -v ./integration/
