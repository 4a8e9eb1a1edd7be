// Command kube-proxy is the upstream Kubernetes service proxy, built from the
// k8s.io/kubernetes module pinned in this module's go.mod. `make cluster`
// runs it in iptables mode, so ClusterIPs (the kube-dns Service) work.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics
	"k8s.io/kubernetes/cmd/kube-proxy/app"
)

func main() {
	os.Exit(cli.Run(app.NewProxyCommand()))
}
