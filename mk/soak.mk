# The soak (integration/soak_test.go, docs/soak.md): the whole system under
# steady changes and lookups while a seeded schedule injects faults; a
# checker then judges convergence, staleness, lookups and skydns's watch
# history. SOAK_DURATION (10m by default) bounds the faults and changes;
# SOAK_SEED replays a run's schedule.

SOAK_DURATION ?= 10m

.PHONY: soak

soak: build tools ## faults under load for SOAK_DURATION (10m; CI 2m), then the checker; SOAK_SEED replays a run
	KUBESKY_SOAK=1 SOAK_DURATION=$(SOAK_DURATION) $(if $(SOAK_SEED),SOAK_SEED=$(SOAK_SEED)) $(GO) test -count=1 -v -timeout 60m -run '^TestSoak$$' ./integration/
