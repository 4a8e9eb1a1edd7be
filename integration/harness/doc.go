// Package harness runs the real servers kubesky's end-to-end tests need as
// child processes on 127.0.0.1: etcd (StartEtcd, with Stop/Restart on the
// same ports, Compact, Defrag and etcdctl; StartEtcdCluster for several
// members, each behind a peer proxy that Partition cuts), kube-apiserver
// (StartAPIServer), kube-controller-manager (StartControllerManager), and
// kubesky's own skydns and kube2sky (StartSkyDNS, StartKube2Sky, with
// /readyz and /metrics helpers). It also has the clients the tests assert
// with — Query (github.com/miekg/dns over UDP or TCP) and Dig (the dig
// command) — and Proxy, a TCP forwarder that can cut a daemon off from etcd
// as a network partition would. StartPrometheus runs the system's
// prometheus binary against any of them, for tests of dashboards and
// alert rules.
//
// Every server is started from a test, logs to a file under t.TempDir()
// (the tail is printed when the test fails), and is stopped by t.Cleanup
// whatever the outcome. Readiness is polled with a deadline; nothing sleeps
// to wait for a condition. The binaries come from the repository's bin/
// directory: `make tools` builds the third-party ones, `make build`
// kubesky's.
package harness
