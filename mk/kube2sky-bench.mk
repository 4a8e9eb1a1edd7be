# kube2sky at scale through the real kube-apiserver: BenchmarkKube2SkyAtScale in
# integration/ loads 10k headless Services with 50k endpoints, then times kube2sky's initial sync,
# a steady resync and 100 changes/s for 60 s seen through skydns. About 2 minutes; the tables go
# to stdout and bench/results/kube2sky.md. See docs/bench-kube2sky.md.
#
# (mk/kube2sky.mk's bench-kube2sky is kube2sky's own Go micro-benchmarks, on an embedded etcd.)

# Sizes, read by the benchmark from the environment; empty means its default.
export KUBESKY_SCALE_SERVICES KUBESKY_SCALE_PODS KUBESKY_SCALE_POD_CHURN_RATE KUBESKY_SCALE_CHURN_RATE KUBESKY_SCALE_CHURN_DURATION KUBESKY_SCALE_RESYNC KUBESKY_SCALE_OUT KUBESKY_SCALE_PROFILE

.PHONY: bench-kube2sky-scale bench-kube2sky-pods

bench-kube2sky-scale: build tools ## kube2sky via the real kube-apiserver: 10k Services sync, resync, churn→skydns (~2 min; KUBESKY_SCALE_CHURN_DURATION=10s to shorten)
	$(GO) test -count=1 -timeout 15m -run '^$$' -bench '^BenchmarkKube2SkyAtScale$$' -benchtime 1x ./integration/

# The same at Kubernetes' limit: 150,000 running pods as well (created, then given a running
# status through the API, 64 at a time: most of the run), kube2sky and skydns with
# --pod-records=verified, 20 pod changes/s, and the pod targets. Its tables go to
# bench/results/kube2sky-pods.md unless KUBESKY_SCALE_OUT says otherwise.
bench-kube2sky-pods: build tools ## the same with 150k running pods: pod sync, memory and churn targets (~25 min; KUBESKY_SCALE_PODS to resize)
	KUBESKY_SCALE_PODS=$(or $(KUBESKY_SCALE_PODS),150000) KUBESKY_SCALE_OUT=$(or $(KUBESKY_SCALE_OUT),../bench/results/kube2sky-pods.md) \
		$(GO) test -count=1 -timeout 90m -run '^$$' -bench '^BenchmarkKube2SkyAtScale$$' -benchtime 1x ./integration/
