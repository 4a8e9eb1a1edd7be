// Package deploy holds what it takes to run kubesky outside `go test`: the
// Kubernetes manifests that replace kube-dns (kubernetes/, and the shared
// etcd topology over it, shared-etcd/), the example Services the demos load
// (examples/), the Dockerfile, and the Go code that reads those manifests
// and applies them to an API server with server-side apply, so the demo
// needs no kubectl.
//
// The manifests and examples are embedded: the kubesky-demo binary carries
// them into its FROM-scratch image.
//
//	objs, err := deploy.Examples()
//	applier, err := deploy.NewApplier(restConfig, "kubesky-demo")
//	err = applier.Apply(ctx, objs)
//
// See deploy/README.md for the manifests themselves.
package deploy
