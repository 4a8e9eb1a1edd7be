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

.DEFAULT_GOAL := build
.PHONY: help build test test-unit test-fuzz test-integration bench bench-go lint run clean

help: ## list the targets
	@grep -hE '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | sort | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

build: ## static binaries (CGO_ENABLED=0) into bin/
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/...

test: lint test-unit test-fuzz test-integration ## everything CI runs

test-unit: coredns ## the fast loop: unit and embedded-etcd tests, with the race detector (CoreDNS for the interop test)
	$(GO) test -race -count=1 $(shell $(GO) list $(PKGS) | grep -v /integration)

test-fuzz: ## a short run of every fuzz target (FUZZTIME inputs each)
	@set -e; $(GO) list -f '{{.Dir}}' $(PKGS) | while read -r dir; do \
	  for target in $$(grep -hoE '^func (Fuzz[A-Za-z0-9_]+)' $$dir/*_test.go 2>/dev/null | cut -d' ' -f2); do \
	    echo "fuzz $$target in $$dir"; \
	    (cd $$dir && $(GO) test -run='^$$' -fuzz="^$$target$$" -fuzztime=$(FUZZTIME) .) || exit 1; \
	  done; \
	done

test-integration: build tools coredns ## end-to-end: real kube-apiserver, etcd, kube2sky, skydns
	$(GO) test -count=1 -timeout 20m ./integration/...

bench: bench-go bench-dns bench-kube2sky-scale ## every benchmark: Go micro-benchmarks, the DNS server comparison, kube2sky at scale (< 15 min)

bench-go: ## Go micro-benchmarks: resolver, snapshot, records, kube2sky sync
	$(GO) test -run='^$$' -bench=. -benchmem $(shell $(GO) list $(PKGS) | grep -v /integration)

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
