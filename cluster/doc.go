// Package cluster runs a real single-node Kubernetes with kubesky as its
// cluster DNS, inside one network namespace it creates and removes: etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler, a kubelet with
// its own containerd (CRI) and the CNI bridge, and kube-proxy in iptables
// mode. kubesky is deployed by applying deploy/kubernetes through a small
// kustomize overlay (local image names, imagePullPolicy Never), as a user
// applies it (or, with Config.Overlay empty, the caller deploys another
// topology with Deploy). Every image is built here and imported; nothing is
// pulled.
//
// Nothing leaves the namespace: it has no link to the host's network, and
// the node's daemons run in a private mount namespace that hides the host's
// /run, /var/lib and /var/log and masks the kernel settings the kubelet would
// otherwise change host-wide. Stop (and Clean, for a run that crashed)
// removes the processes, the node's cgroups and the namespace. See
// docs/cluster.md.
package cluster
