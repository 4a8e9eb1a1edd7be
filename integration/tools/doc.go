// Package tools pins the versions of the third-party programs kubesky runs
// for real: kube-apiserver and kube-controller-manager (the end-to-end tests
// and the demo), kubelet, kube-proxy, kube-scheduler, kubectl and agnhost
// (`make cluster`), and the sig-network e2e suite (./conformance, `make
// conformance`), all from k8s.io/kubernetes; etcd with etcdctl; and helm
// (a tool of this module: the chart's tests and `make test-helm`). It is a
// separate Go module so the root module does not depend on
// k8s.io/kubernetes. build.sh builds each set into the repository's bin/
// directory (`make tools` the first and helm).
package tools
