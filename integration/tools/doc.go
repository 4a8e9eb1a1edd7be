// Package tools pins the versions of the third-party servers the kubesky
// end-to-end tests run for real: kube-apiserver and kube-controller-manager
// from k8s.io/kubernetes, and etcd with etcdctl. It is a separate Go module so
// the root module does not depend on k8s.io/kubernetes. Build the binaries
// into the repository's bin/ directory with build.sh (or `make tools`).
package tools
