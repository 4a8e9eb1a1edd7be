// Package integration holds kubesky's end-to-end tests. They run the real
// servers — etcd, kube-apiserver, kube-controller-manager, and kubesky's own
// kube2sky and skydns — from the repository's bin/ directory through the
// harness package: the data-driven scenarios of testdata/scenarios.yaml
// (TestScenarios), the propagation figures (TestPropagation), and one test
// per injected failure. `make test-integration` builds the binaries and
// runs them; see docs/integration.md.
package integration
