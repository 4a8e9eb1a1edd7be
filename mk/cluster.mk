# A real Kubernetes (one control plane, NODES nodes) with kubesky as its cluster DNS, inside
# network namespaces of its own (package cluster, cmd/kubesky-cluster; see docs/cluster.md).
# Every target needs root. NODES: 1 for `make cluster`, 3 for the tests, unless given.

# IP_FAMILY: ipv4 or ipv6, the one family of every Service, pod and node address.
NODES ?=
# CLUSTERS: 2 makes `make cluster` a clusterset of two clusters, east and west (NODES each, per-pod,
# IPv4), whose pod ranges are routed to each other and whose kubesky shares one broker etcd.
CLUSTERS ?= 1
IP_FAMILY ?= ipv4
# CLUSTER_LOCK: one cluster at a time on a machine (the namespaces, cgroups and containerd
# root have fixed names); a second run waits for the first instead of breaking it.
CLUSTER_LOCK := flock --verbose /run/kubesky-cluster.lock
CLUSTER_GO_TEST = $(CLUSTER_LOCK) env KUBESKY_CLUSTER_TEST=1 KUBESKY_CLUSTER_NODES=$(or $(NODES),$(DEFAULT_NODES),3) KUBESKY_CLUSTER_IP_FAMILY=$(IP_FAMILY) $(GO) test -count=1 -v
CONFORMANCE_FOCUS ?= \[sig-network\] DNS.*\[Conformance\]
# Every DNS spec: [sig-network] DNS, DNS HostNetwork, DNS configMap nameserver, and
# [Feature:PerformanceDNS]; TestConformance skips only those that need the internet or a cloud.
CONFORMANCE_FULL_FOCUS := \[sig-network\] (DNS|\[Feature:PerformanceDNS\])
# TOPOLOGY: per-pod (deploy/kubernetes), shared (deploy/shared-etcd) or node-local (deploy/node-local),
# for make cluster and the conformance targets.
TOPOLOGY ?= per-pod

# WITH_CONFORMANCE=1: test-cluster and test-node-local first run the DNS conformance e2e tests
# (CONFORMANCE_FOCUS) in their own cluster, what `make conformance` does in a cluster of its own.
WITH_CONFORMANCE ?=
CLUSTER_CONFORMANCE = $(if $(WITH_CONFORMANCE),KUBESKY_CLUSTER_CONFORMANCE='$(CONFORMANCE_FOCUS)')
CLUSTER_TIMEOUT = $(if $(WITH_CONFORMANCE),45m,20m)

.PHONY: test-clusterset cluster cluster-tools conformance-tools cluster-clean test-cluster test-cluster-shared test-node-local test-security test-migrate bench-node-local bench-node-local-partition test-helm conformance conformance-full

cluster: build cluster-tools ## a real Kubernetes (NODES=1 nodes, IP_FAMILY=ipv4, TOPOLOGY=per-pod) with kubesky as its DNS, in netns kubesky*, until Ctrl-C (root; first run ~10 min after make tools, then ~1 min)
	@exec $(CLUSTER_LOCK) $(BIN)/kubesky-cluster up --repo . --nodes $(or $(NODES),1) --ip-family $(IP_FAMILY) --topology $(TOPOLOGY) --clusters $(CLUSTERS)

# with_ticker runs the shell command $(1), printing a line every 30 s while it takes minutes.
with_ticker = start=$$(date +%s); \
	( while sleep 30; do echo "  ... still building ($$(( $$(date +%s) - start ))s)"; done ) & ticker=$$!; \
	$(1); rc=$$?; kill $$ticker 2>/dev/null; exit $$rc

# cluster-tools builds the Kubernetes servers and node binaries (once).
cluster-tools: coredns
	@$(call with_ticker,integration/tools/build.sh servers && integration/tools/build.sh node)

cluster-clean: build ## remove what a crashed `make cluster` left (processes, cgroups, the namespace)
	$(BIN)/kubesky-cluster clean --repo . --clusters $(CLUSTERS)

test-cluster: build cluster-tools $(if $(WITH_CONFORMANCE),conformance-tools) ## the real cluster (NODES=3): lookups from pods (busybox and glibc), a kubesky pod deleted and a node drained under load, the host left as it was (root; WITH_CONFORMANCE=1 runs the DNS e2e tests in it first)
	$(CLUSTER_CONFORMANCE) $(CLUSTER_GO_TEST) -timeout $(CLUSTER_TIMEOUT) -run '^TestCluster$$' ./cluster/clustertest/

test-clusterset: DEFAULT_NODES := 1
test-clusterset: build cluster-tools ## two real clusters sharing a broker etcd (NODES=1 each): Multi-Cluster Services by name and clusterset IP through kube-proxy, a Service exported from both, a cluster cut off from the broker and back, export times (root)
	$(CLUSTER_GO_TEST) -timeout 20m -run '^TestClusterset$$' ./cluster/clustertest/

test-cluster-shared: build cluster-tools ## deploy/shared-etcd in the real cluster: etcd leader, kube2sky leader, a skydns pod deleted under lookups and Service churn (root)
	$(CLUSTER_GO_TEST) -timeout 20m -run '^TestSharedEtcdTopology$$' ./cluster/clustertest/

test-node-local: build cluster-tools $(if $(WITH_CONFORMANCE),conformance-tools) ## deploy/node-local in the real cluster: every pod answered by its own node without conntrack, a rolling update, kill -9 of a node's skydns, then of its holder, and a replacement of both etcd CAs and every key, under 50 glibc lookups/s (none may fail or take 1 s) (root; WITH_CONFORMANCE=1 runs the DNS e2e tests in it first)
	$(CLUSTER_CONFORMANCE) $(CLUSTER_GO_TEST) -timeout $(CLUSTER_TIMEOUT) -run '^TestNodeLocal$$' ./cluster/clustertest/

test-security: build cluster-tools ## every reader credential of deploy/shared-etcd and deploy/node-local tried as a writer on every path in the real cluster (the security subtests of test-cluster-shared and test-node-local, one cluster each) (root)
	$(CLUSTER_GO_TEST) -timeout 30m -run '^(TestSharedEtcdTopology|TestNodeLocal)$$/^security' ./cluster/clustertest/

bench-node-local: build cluster-tools ## deploy/node-local's skydns against CoreDNS as NodeLocal DNSCache in one real cluster (NODES=3): latency cold and warm, propagation, rollout, kill -9, the conntrack race, memory; writes bench/results/node-local.md (root, ~15 min)
	KUBESKY_BENCH_NODE_LOCAL=1 $(CLUSTER_GO_TEST) -timeout 40m -run '^TestNodeLocalComparison$$' ./cluster/clustertest/

bench-node-local-partition: build cluster-tools ## one node's skydns cut off from the relays for 2 minutes (nftables in its namespace) while a Service changes: every lookup answered from its snapshot, the change answered within 5 s of rejoining; writes bench/results/node-local-partition.md (root, ~6 min)
	KUBESKY_BENCH_NODE_LOCAL=1 $(CLUSTER_GO_TEST) -timeout 20m -run '^TestNodeLocalPartition$$' ./cluster/clustertest/

test-helm: build cluster-tools ## deploy/helm/kubesky in the real cluster, every topology (per-pod and shared in one cluster, node-local in a second): helm install, helm upgrade under lookups (none may fail), helm uninstall leaving nothing (root)
	@$(call with_ticker,integration/tools/build.sh helm)
	$(CLUSTER_GO_TEST) -timeout 30m -run '^TestHelm(NodeLocal)?$$' ./cluster/clustertest/

test-migrate: build cluster-tools ## CoreDNS with a customised Corefile replaced by the Helm chart reading its ConfigMap, and back, under lookups (none may fail), every answer compared (TestHelm's first subtest alone) (root)
	@$(call with_ticker,integration/tools/build.sh helm)
	$(CLUSTER_GO_TEST) -timeout 30m -run '^TestHelm$$/^from' ./cluster/clustertest/

# conformance-tools builds e2e.test, Kubernetes' e2e suite (once).
conformance-tools:
	@$(call with_ticker,integration/tools/build.sh conformance)

conformance: build cluster-tools conformance-tools ## Kubernetes' [sig-network] DNS [Conformance] e2e tests against the real cluster (root; TOPOLOGY=per-pod|shared)
	KUBESKY_CONFORMANCE_FOCUS='$(CONFORMANCE_FOCUS)' KUBESKY_CONFORMANCE_TOPOLOGY=$(TOPOLOGY) $(CLUSTER_GO_TEST) -timeout 45m -run '^TestConformance$$' ./cluster/clustertest/

conformance-full: ## every [sig-network] DNS e2e test that can run offline, [Slow], [Serial] and [Feature:PerformanceDNS] too (root; TOPOLOGY=per-pod|shared)
	@$(MAKE) --no-print-directory conformance CONFORMANCE_FOCUS='$(CONFORMANCE_FULL_FOCUS)'
