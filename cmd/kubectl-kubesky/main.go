// Command kubectl-kubesky is kubesky's command line (cmd/kubesky) under the
// name kubectl looks for, so that with it on $PATH `kubectl kubesky
// explain NAME [TYPE]` and `kubectl kubesky corefile check FILE` work.
package main

import (
	"os"

	"github.com/kubesky/kubesky/explain"
)

func main() {
	os.Exit(explain.Main("kubectl kubesky", os.Args[1:], os.Stdout, os.Stderr))
}
