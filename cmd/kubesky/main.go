// Command kubesky is kubesky's command line for people: `kubesky explain
// NAME [TYPE]` says why a DNS name answers what it does (see package
// explain and docs/operations.md); `kubesky corefile check FILE` says what
// kubesky makes of a CoreDNS Corefile (package corefile, docs/corefile.md);
// `kubesky clusterset grant --cluster-id=ID ...` creates the etcd users and
// roles of a clusterset (package kube2sky/clusterset, docs/clusterset.md).
// Installed as kubectl-kubesky it is the kubectl plugin `kubectl kubesky ...`.
package main

import (
	"os"
	"path/filepath"

	"github.com/kubesky/kubesky/explain"
)

func main() {
	os.Exit(explain.Main(filepath.Base(os.Args[0]), os.Args[1:], os.Stdout, os.Stderr))
}
