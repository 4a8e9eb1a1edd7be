# The end-to-end suite in integration/ (see docs/integration.md). The root Makefile's
# test-integration runs all of it; these run parts of it.

INTEGRATION_GO_TEST := $(GO) test -count=1 -timeout 20m

.PHONY: test-scenarios integration-figures

test-scenarios: build tools ## the data-driven DNS scenarios only (integration/testdata/scenarios.yaml)
	$(INTEGRATION_GO_TEST) -run 'TestScenario' ./integration/

integration-figures: build tools ## print the propagation (p50/p99) and leader-failover figures
	@out=$$(mktemp); $(INTEGRATION_GO_TEST) -run 'TestPropagation|TestLeaderFailover' -v ./integration/ >$$out 2>&1; \
	  status=$$?; grep -E '^(propagation|leader failover)' $$out; \
	  if [ $$status -ne 0 ]; then tail -60 $$out; fi; rm -f $$out; exit $$status
