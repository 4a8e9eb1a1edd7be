// Package clustertest checks the real cluster of package cluster: lookups
// from pods through kube-proxy with the resolv.conf the kubelet writes, a
// kubesky pod deleted under load, the shared-etcd topology losing an etcd
// member, the kube2sky leader and a skydns pod under lookups and Service
// churn, Kubernetes' own DNS conformance tests, and
// that the host is left as it was. The tests need root and the binaries
// `make test-cluster` builds; they run only when KUBESKY_CLUSTER_TEST=1.
package clustertest
