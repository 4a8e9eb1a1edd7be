# Third-party servers for the end-to-end tests, built from Go modules into bin/
# by the nested module integration/tools (see its build.sh and coredns.sh).

.PHONY: tools coredns

tools: ## kube-apiserver, kube-controller-manager, etcd, etcdctl, helm and kubectl into bin/ (skips when the pins are unchanged; cold ~9 min)
	integration/tools/build.sh
	integration/tools/build.sh helm

coredns: ## CoreDNS v1.14.7 into bin/ for interop tests and benchmarks (skips when present)
	integration/tools/coredns.sh
