package cluster

import (
	"io"
	"path/filepath"
)

// The cluster's fixed addresses. They exist only inside the namespace.
const (
	NodeName    = "kubesky-node"
	NodeIP      = "10.0.0.2"  // the node's address: API server, kubelet
	gatewayIP   = "10.0.0.1"  // the default route's next hop: a dead end
	UpstreamIP  = "10.0.0.53" // the stand-in for an upstream resolver
	PodCIDR     = "10.244.0.0/24"
	ServiceCIDR = "10.96.0.0/16"
	ClusterDNS  = "10.96.0.10" // the kube-dns Service of deploy/kubernetes
	APIPort     = 6443
	etcdClient  = "http://127.0.0.1:2379"
	etcdPeer    = "http://127.0.0.1:2380"
)

// Config says where the cluster's pieces are.
type Config struct {
	// RepoDir is the repository: deploy/kubernetes and cluster/overlay.
	RepoDir string
	// BinDir holds kubesky's binaries (make build) and the Kubernetes ones
	// (integration/tools/build.sh servers and node).
	BinDir string
	// DataDir holds everything the cluster writes: built images under
	// images/, the Debian root filesystem under build/, and the running
	// cluster's state under run/ (removed at each start).
	DataDir string
	// NetNS is the network namespace's name (under /run/netns).
	NetNS string
	// Overlay is the kustomization Start applies, relative to RepoDir
	// (cluster/overlay by default). Empty: Start deploys no DNS, and the
	// caller deploys one with Deploy.
	Overlay string
	// Out receives progress lines.
	Out io.Writer
}

// DefaultConfig is the layout `make cluster` uses, relative to repo.
func DefaultConfig(repo string) Config {
	return Config{
		RepoDir: repo,
		BinDir:  filepath.Join(repo, "bin"),
		DataDir: filepath.Join(repo, ".cache", "cluster"),
		NetNS:   "kubesky",
		Overlay: filepath.Join("cluster", "overlay"),
		Out:     io.Discard,
	}
}

// paths are the files of one run, all under DataDir.
type paths struct {
	run, logs, pki, etcd, kubeconfig string
	containerd, socket, cni, kubelet string
	mask                             string
	images, build                    string
}

func (c Config) paths() paths {
	run := filepath.Join(c.DataDir, "run")
	return paths{
		run:        run,
		logs:       filepath.Join(run, "logs"),
		pki:        filepath.Join(run, "pki"),
		etcd:       filepath.Join(run, "etcd"),
		kubeconfig: filepath.Join(run, "kubeconfig"),
		containerd: filepath.Join(run, "containerd"),
		socket:     filepath.Join(run, "containerd", "containerd.sock"),
		cni:        filepath.Join(run, "cni"),
		kubelet:    filepath.Join(run, "kubelet"),
		mask:       filepath.Join(run, "mask"),
		images:     filepath.Join(c.DataDir, "images"),
		build:      filepath.Join(c.DataDir, "build"),
	}
}

// Kubeconfig is the admin kubeconfig of the running cluster. Its server,
// https://10.0.0.2:6443, is reachable only inside the namespace.
func (c Config) Kubeconfig() string { return c.paths().kubeconfig }

// netnsDirMarker exists while /run/netns is there because the cluster
// created it. It is outside run/, which each start removes.
func (c Config) netnsDirMarker() string { return filepath.Join(c.DataDir, "created-run-netns") }

func (c Config) bin(name string) string { return filepath.Join(c.BinDir, name) }
