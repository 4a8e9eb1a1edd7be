# kube2sky extras. The root Makefile builds ./cmd/kube2sky into bin/ and runs its tests and
# benchmarks with everything else; these targets run kube2sky's alone. See docs/kube2sky.md.

KUBE2SKY_PKGS := ./kube2sky/... ./cmd/kube2sky/

.PHONY: kube2sky test-kube2sky bench-kube2sky fuzz-kube2sky

kube2sky: ## bin/kube2sky only
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/kube2sky ./cmd/kube2sky

test-kube2sky: ## kube2sky's tests (records tables, controller on embedded etcd, the binary's flags), with -race
	$(GO) test -race -count=1 $(KUBE2SKY_PKGS)

bench-kube2sky: ## records for 10k Services; initial sync and steady resync of 10k Services / 50k endpoints into etcd
	$(GO) test -run='^$$' -bench=. -benchmem -benchtime=5x $(KUBE2SKY_PKGS)

fuzz-kube2sky: ## the records fuzzer for FUZZTIME inputs
	$(GO) test -run='^$$' -fuzz='^FuzzBuild$$' -fuzztime=$(FUZZTIME) ./kube2sky/records
