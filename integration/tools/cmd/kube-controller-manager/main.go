// Command kube-controller-manager is the upstream Kubernetes controller
// manager, built from the k8s.io/kubernetes module pinned in this module's
// go.mod. The end-to-end tests run it for its EndpointSlice controller.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
