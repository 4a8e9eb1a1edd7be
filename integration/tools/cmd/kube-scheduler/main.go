// Command kube-scheduler is the upstream Kubernetes scheduler, built from the
// k8s.io/kubernetes module pinned in this module's go.mod. `make cluster`
// runs it to place Pods on its one node.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
)

func main() {
	os.Exit(cli.Run(app.NewSchedulerCommand()))
}
