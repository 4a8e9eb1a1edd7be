# kubesky — every developer command. `make help` lists them.

GO      ?= go
BIN     := bin
PKGS    := ./...
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS := -s -w -X github.com/kubesky/kubesky/internal/version.Version=$(VERSION) -X github.com/kubesky/kubesky/internal/version.revision=$(REVISION)
# A count of inputs, not a duration: a duration-bounded run of Go 1.26's fuzzer can fail with a
# bare "context deadline exceeded" when its deadline races a worker (golang/go#75804).
FUZZTIME ?= 30000x

# One build flavour for every build that is not -race: static and -trimpath, as the binaries
# ship. vet, bin/, the end-to-end and cluster tests, and the Kubernetes tools then share one
# compile of each dependency in Go's build cache; the race run (which needs cgo) is the only
# other flavour, and the fuzzer's instrumented one the third.
export CGO_ENABLED := 0
export GOFLAGS := -trimpath $(filter-out -trimpath,$(GOFLAGS))

.DEFAULT_GOAL := build
.PHONY: help build test test-unit test-fuzz fuzz-all test-integration ci-time bench bench-go lint run clean

help: ## list the targets
	@grep -hE '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | sort | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

build: ## static binaries (CGO_ENABLED=0) into bin/
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/...
	@# skydns-node: skydns without etcd's server (no embedded etcd, no relay), deploy/node-local's
	CGO_ENABLED=0 $(GO) build -trimpath -tags noembed -ldflags '$(LDFLAGS)' -o $(BIN)/skydns-node ./cmd/skydns

# TEST_PARTS run one after another; each prints its wall time, and the times are repeated at the
# end, so a slow CI run shows which part grew.
TEST_PARTS := lint test-unit test-fuzz test-integration

test: ## everything CI runs: lint, test-unit, test-fuzz, test-integration, each part's time printed
	@times=""; for part in $(TEST_PARTS); do start=$$(date +%s); \
	  $(MAKE) --no-print-directory $$part || exit $$?; \
	  took=$$(( $$(date +%s) - start )); echo "make test: $$part took $${took}s"; \
	  times="$$times $$part $${took}s"; done; echo "make test: done:$$times"

# ALLOC_PKGS hold zero-allocation checks that the race detector's own allocations would break:
# they skip under -race, so test-unit runs these packages once more without it.
ALLOC_PKGS := ./skydns/fastpath ./skydns/querylog
# deploy's tests render the manifests and the chart (kustomize, Helm) in one goroutine: they run
# without -race, so those libraries are not compiled a second time with its instrumentation.
UNIT_PKGS = $(shell $(GO) list $(PKGS) | grep -v /integration)
NO_RACE_PKGS = $(filter %/deploy %/deploy/composetest,$(UNIT_PKGS))

test-unit: coredns ## the fast loop: unit and embedded-etcd tests, with the race detector but in deploy/ (CoreDNS for the interop test); then the zero-allocation checks without it
	CGO_ENABLED=1 $(GO) test -race -count=1 $(filter-out $(NO_RACE_PKGS),$(UNIT_PKGS))
	$(GO) test -count=1 $(NO_RACE_PKGS) $(ALLOC_PKGS)

# Every fuzz target's seed corpus runs as an ordinary test in test-unit. The fuzzer itself, which
# compiles each package and all it imports once more with coverage instrumentation, runs in
# test-fuzz for the packages that read what comes from the network or from etcd: DNS packets,
# upstream replies, etcd values. fuzz-all adds kube2sky's (objects from the API server).
FUZZ_NETWORK_PKGS := ./contract ./skydns ./skydns/fastpath ./skydns/forward ./skydns/resolver

# fuzz_targets runs each fuzz target of the packages $(1) for FUZZTIME inputs. A package's test
# binary, instrumented for the fuzzer, is built once (go test -c -fuzz) and runs each of its
# targets from the package's directory, as go test -fuzz would, with go test's corpus cache: one
# link per package, not one per target.
fuzz_targets = set -e; work=$$(mktemp -d); trap 'rm -rf "$$work"' EXIT; \
	$(GO) list -f '{{.ImportPath}} {{.Dir}}' $(1) | while read -r pkg dir; do \
	  targets=$$(grep -hoE '^func (Fuzz[A-Za-z0-9_]+)' $$dir/*_test.go 2>/dev/null | cut -d' ' -f2); \
	  [ -n "$$targets" ] || continue; \
	  start=$$(date +%s); $(GO) test -c -fuzz=. -o $$work/fuzz.test $$pkg; \
	  echo "fuzz: $$pkg built in $$(( $$(date +%s) - start ))s"; \
	  for target in $$targets; do \
	    echo "fuzz $$target in $$dir"; start=$$(date +%s); \
	    (cd $$dir && $$work/fuzz.test -test.run='^$$' -test.fuzz="^$$target$$" -test.fuzztime=$(FUZZTIME) \
	      -test.fuzzcachedir="$$($(GO) env GOCACHE)/fuzz/$$pkg" -test.paniconexit0) || exit 1; \
	    echo "fuzz $$target took $$(( $$(date +%s) - start ))s"; \
	  done; \
	done

test-fuzz: ## the fuzzer on every target that reads network or etcd input (FUZZTIME inputs each)
	@$(call fuzz_targets,$(FUZZ_NETWORK_PKGS))

fuzz-all: ## the fuzzer on every fuzz target, kube2sky's too (FUZZTIME inputs each; cold ~9 min)
	@$(call fuzz_targets,$(PKGS))

test-integration: build tools coredns ## end-to-end: real kube-apiserver, etcd, kube2sky, skydns
	$(GO) test -count=1 -timeout 20m ./integration/...

bench: bench-go bench-dns bench-kube2sky-scale ## every benchmark: Go micro-benchmarks, the DNS server comparison, kube2sky at scale (< 15 min)

bench-go: ## Go micro-benchmarks: resolver, snapshot, records, kube2sky sync
	$(GO) test -run='^$$' -bench=. -benchmem $(shell $(GO) list $(PKGS) | grep -v /integration)

ci-time: ## .ci/run as a fresh CI machine runs it (a clean clone of HEAD, empty Go caches): each step's time (~40 min)
	.ci/time

lint: ## gofmt, go vet, go mod tidy check
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	@cp go.mod /tmp/kubesky.go.mod.bak; cp go.sum /tmp/kubesky.go.sum.bak; $(GO) mod tidy; \
	  if ! diff -q go.mod /tmp/kubesky.go.mod.bak >/dev/null || ! diff -q go.sum /tmp/kubesky.go.sum.bak >/dev/null; then \
	    echo "go.mod/go.sum not tidy: run go mod tidy"; cp /tmp/kubesky.go.mod.bak go.mod; cp /tmp/kubesky.go.sum.bak go.sum; exit 1; fi

run: build ## skydns with its embedded etcd (DNS on 127.0.0.1:1053, etcd on 127.0.0.1:2379)
	$(BIN)/skydns --dns-addr 127.0.0.1:1053

clean: ## remove binaries and local data (not the cached tools)
	rm -rf $(BIN)/skydns $(BIN)/kube2sky data/

-include mk/*.mk
