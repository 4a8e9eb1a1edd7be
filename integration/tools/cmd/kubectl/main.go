// Command kubectl is the upstream Kubernetes command-line client, built from
// the k8s.io/kubectl module that k8s.io/kubernetes pins in this module's
// go.mod. `make cluster` applies deploy/kubernetes with it, as users do.
package main

import (
	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	if err := cli.RunNoErrOutput(cmd.NewDefaultKubectlCommand()); err != nil {
		util.CheckErr(err)
	}
}
