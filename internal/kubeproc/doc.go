// Package kubeproc is what every program here that runs a Kubernetes control
// plane shares: the API server's files (a CA, its serving certificate, a
// service-account key, an admin token and kubeconfigs), its command line, and
// the supervision of server processes (start with a log file, stop with a
// grace period, notice an exit). The demo (cmd/kubesky-demo), the test
// harness (integration/harness), the real cluster (cluster/) and the DNS
// benchmark (bench/cmd/benchdns) build on it.
package kubeproc
