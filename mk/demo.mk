# The demos: `make demo` on this machine, docker compose with images built FROM scratch, and the
# compose tests. See docs/demo.md and deploy/README.md.

# `docker compose` (v2) when present, else the standalone docker-compose (v1.29+).
COMPOSE ?= $(shell if docker compose version >/dev/null 2>&1; then echo "docker compose"; \
	elif command -v docker-compose >/dev/null 2>&1; then echo docker-compose; fi)
IMAGE_PREFIX  ?= kubesky
IMAGE_TAG     ?= latest
IMAGES        := skydns kube2sky etcd kube-apiserver demo
IMAGE_CONTEXT := .cache/images
IMAGE_BINARIES := skydns skydns-holder skydns-node kube2sky kubesky-demo healthcheck etcd etcdctl kube-apiserver
# The compose tests' bound; each test also bounds every wait inside it.
COMPOSE_TEST_TIMEOUT ?= 12m

.PHONY: demo demo-tools images test-compose test-compose-ha docker-check compose-check

demo: build demo-tools ## run the whole pipeline here (DNS on 127.0.0.1:1053) until Ctrl-C; builds the tools once (~8 min)
	@exec $(BIN)/kubesky-demo run

# demo-tools runs `make tools`, printing a line every 30 s while a first build takes minutes
# (with_ticker is in mk/cluster.mk).
demo-tools:
	@if [ ! -x $(BIN)/kube-apiserver ]; then \
	  echo "First run: building etcd and kube-apiserver from Go modules (about 8 minutes on 2 cores, once)."; fi; \
	$(call with_ticker,integration/tools/build.sh)

images: build tools docker-check ## FROM-scratch images kubesky/{skydns,kube2sky,etcd,kube-apiserver,demo} (nothing pulled)
	@rm -rf $(IMAGE_CONTEXT) && mkdir -p $(IMAGE_CONTEXT)/data
	@for b in $(IMAGE_BINARIES); do ln -f $(BIN)/$$b $(IMAGE_CONTEXT)/$$b 2>/dev/null || cp $(BIN)/$$b $(IMAGE_CONTEXT)/$$b; done
	@for img in $(IMAGES); do \
	  echo "docker build --target $$img -t $(IMAGE_PREFIX)/$$img:$(IMAGE_TAG)"; \
	  out=$$(docker build -q --target $$img -t $(IMAGE_PREFIX)/$$img:$(IMAGE_TAG) -f deploy/Dockerfile $(IMAGE_CONTEXT) 2>&1) \
	    || { echo "$$out"; exit 1; }; \
	done

test-compose: compose-check images ## docker-compose.yml: up, DNS answers from the host, skydns keeps answering without etcd, down -v
	@KUBESKY_COMPOSE_TEST=1 KUBESKY_COMPOSE="$(COMPOSE)" $(GO) test -count=1 -timeout $(COMPOSE_TEST_TIMEOUT) \
	  -run '^TestCompose$$' -v ./deploy/composetest/; rc=$$?; \
	  $(COMPOSE) -p kubesky-test -f docker-compose.yml down -v --remove-orphans >/dev/null 2>&1; exit $$rc

test-compose-ha: compose-check images ## docker-compose.ha.yml: rolling restart of every replica at 200 queries/s with no failure; stop an etcd member, the kube2sky leader, a skydns; DNS keeps answering
	@KUBESKY_COMPOSE_TEST=1 KUBESKY_COMPOSE="$(COMPOSE)" $(GO) test -count=1 -timeout $(COMPOSE_TEST_TIMEOUT) \
	  -run '^TestComposeHA$$' -v ./deploy/composetest/; rc=$$?; \
	  $(COMPOSE) -p kubesky-test-ha -f docker-compose.ha.yml down -v --remove-orphans >/dev/null 2>&1; exit $$rc

# docker-check and compose-check fail clearly when there is no Docker engine or no compose.
docker-check:
	@docker info >/dev/null 2>&1 || { echo "no Docker engine reachable (docker info failed): images and the compose tests need one"; exit 1; }

compose-check: docker-check
	@[ -n "$(COMPOSE)" ] || { echo "neither 'docker compose' nor 'docker-compose' is installed"; exit 1; }
