// Command kubelet is the upstream Kubernetes node agent, built from the
// k8s.io/kubernetes module pinned in this module's go.mod. `make cluster`
// runs it against a containerd of its own.
package main

import (
	"context"
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics
	"k8s.io/kubernetes/cmd/kubelet/app"
)

func main() {
	os.Exit(cli.Run(app.NewKubeletCommand(context.Background())))
}
