package cluster

import (
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
)

// The cluster's fixed settings. Its addresses are in Addresses.
const (
	APIPort    = 6443
	etcdClient = "http://127.0.0.1:2379"
	etcdPeer   = "http://127.0.0.1:2380"
	bridgeName = "kbr0"
	// MaxNodes bounds Config.Nodes: node addresses end in 11 up to 50, below
	// the upstream's 53.
	MaxNodes = 40
)

// zones are the topology.kubernetes.io/zone values, given to the nodes in
// turn: with three nodes, two share a zone, so spreading over zones and
// over nodes place replicas differently.
var zones = []string{"zone-a", "zone-b"}

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
	// NetNS is the control plane's network namespace (under /run/netns);
	// node i's is NetNS-node-i.
	NetNS string
	// Nodes is how many nodes run pods (1 to MaxNodes), each with its own
	// containerd, kubelet and kube-proxy in its own network namespace.
	Nodes int
	// IPFamily is IPv4 or IPv6: every Service, pod and node address is of
	// that family.
	IPFamily string
	// Overlay is the kustomization Start applies, relative to RepoDir
	// (cluster/overlay by default). Empty: Start deploys no DNS, and the
	// caller deploys one with Deploy.
	Overlay string
	// Topology is the kubesky topology Overlay deploys (see Topologies):
	// with shared or node-local, Start first makes the etcd Secret and
	// volumes; with node-local, the kubelets list the node-local address
	// before the kube-dns Service in the pods' resolv.conf.
	Topology string
	// ClusterID is empty for a lone cluster. Set, the cluster is member
	// Member (1 to MaxMembers) of a clusterset (StartClusterset): its
	// namespaces, node names, run directory and addresses are its own, and
	// its ClusterProperty cluster.clusterset.k8s.io holds this ID.
	ClusterID string
	Member    int
	// Out receives progress lines.
	Out io.Writer
}

// DefaultConfig is the layout `make cluster` uses, relative to repo.
func DefaultConfig(repo string) Config {
	return Config{
		RepoDir:  repo,
		BinDir:   filepath.Join(repo, "bin"),
		DataDir:  filepath.Join(repo, ".cache", "cluster"),
		NetNS:    "kubesky",
		Nodes:    1,
		IPFamily: IPv4,
		Overlay:  filepath.Join("cluster", "overlay"),
		Topology: TopologyPerPod,
		Out:      io.Discard,
	}
}

// Validate checks the node count and the IP family.
func (c Config) Validate() error {
	if c.Nodes < 1 || c.Nodes > MaxNodes {
		return fmt.Errorf("nodes: %d is not between 1 and %d", c.Nodes, MaxNodes)
	}
	if _, ok := addressPlans[c.IPFamily]; !ok {
		return fmt.Errorf("ip-family: %q is not %s or %s", c.IPFamily, IPv4, IPv6)
	}
	if _, ok := Topologies[c.Topology]; !ok {
		return fmt.Errorf("topology: %q is not one of %s", c.Topology, strings.Join(slices.Sorted(maps.Keys(Topologies)), ", "))
	}
	if c.Topology == TopologyNodeLocal && c.Addresses().NodeLocalDNS == "" {
		return fmt.Errorf("topology: %s has no node-local address for %s here", c.Topology, c.IPFamily)
	}
	if c.ClusterID != "" {
		return c.validateMember()
	}
	return nil
}

// IPv6Overlay is the kustomization an IPv6 cluster applies instead of
// cluster/overlay (see WithIPFamily).
var IPv6Overlay = filepath.Join("cluster", "overlay-ipv6")

// WithIPFamily returns c for the IP family: with IPv6, the default overlay
// becomes IPv6Overlay.
func (c Config) WithIPFamily(family string) Config {
	c.IPFamily = family
	if family == IPv6 && c.Overlay == DefaultConfig("").Overlay {
		c.Overlay = IPv6Overlay
	}
	return c
}

// Addresses are the cluster's addresses, of its IP family: a clusterset's
// second member has node and pod ranges of its own.
func (c Config) Addresses() Addresses {
	a := addressPlans[c.IPFamily]
	if c.Member > 1 {
		a = a.member(c.Member)
	}
	return a
}

// Node is one node of the cluster: its name, address, pod range, zone and
// network namespace.
type Node struct {
	Index   int // 1 to Config.Nodes
	Name    string
	IP      string
	PodCIDR string
	Zone    string
	NetNS   string
	// CgroupRoot is the cgroup (in every hierarchy) the node's kubelet puts
	// its pods under, so that the nodes' pods stay apart.
	CgroupRoot string
	gateway    string // the first address of the pod range, on cni0
}

// Node returns node i (1 to Nodes).
func (c Config) Node(i int) Node {
	name := fmt.Sprintf("%s%d", c.nodeNamePrefix(), i)
	a := c.Addresses()
	return Node{
		Index:      i,
		Name:       name,
		IP:         a.nodeIP(i),
		PodCIDR:    a.podCIDR(i),
		gateway:    a.podGateway(i),
		Zone:       zones[(i-1)%len(zones)],
		NetNS:      name,
		CgroupRoot: name,
	}
}

// AllNodes lists the nodes in order.
func (c Config) AllNodes() []Node {
	nodes := make([]Node, c.Nodes)
	for i := range nodes {
		nodes[i] = c.Node(i + 1)
	}
	return nodes
}

// paths are the files of one run, all under DataDir.
type paths struct {
	run, logs, pki, etcd, kubeconfig string
	images, build                    string
}

func (c Config) paths() paths {
	run := filepath.Join(c.DataDir, "run")
	if c.ClusterID != "" {
		run += "-" + c.ClusterID
	}
	return paths{
		run:        run,
		logs:       filepath.Join(run, "logs"),
		pki:        filepath.Join(run, "pki"),
		etcd:       filepath.Join(run, "etcd"),
		kubeconfig: filepath.Join(run, "kubeconfig"),
		images:     filepath.Join(c.DataDir, "images"),
		build:      filepath.Join(c.DataDir, "build"),
	}
}

// nodeNamePrefix begins every node's name, which is also its network
// namespace's and its cgroup root's: kubesky-node- for the default NetNS.
func (c Config) nodeNamePrefix() string { return c.NetNS + "-node-" }

// nodePaths are the files of one node, under run/<node name>.
type nodePaths struct {
	dir, logs, containerd, socket, cni, kubelet, mask, kubeProxy, holder string
}

func (c Config) nodePaths(n Node) nodePaths {
	p := c.paths()
	dir := filepath.Join(p.run, n.Name)
	if c.ClusterID != "" {
		// run-<id> already names the cluster: a shorter node directory
		// keeps containerd's sockets within the 104 bytes a Unix socket
		// path may have wherever the lone cluster's fit.
		dir = filepath.Join(p.run, fmt.Sprintf("node-%d", n.Index))
	}
	return nodePaths{
		dir:        dir,
		logs:       filepath.Join(p.logs, n.Name),
		containerd: filepath.Join(dir, "containerd"),
		socket:     filepath.Join(dir, "containerd", "containerd.sock"),
		cni:        filepath.Join(dir, "cni"),
		kubelet:    filepath.Join(dir, "kubelet"),
		mask:       filepath.Join(dir, "mask"),
		kubeProxy:  filepath.Join(dir, "kube-proxy.yaml"),
		holder:     filepath.Join(dir, "holder.sh"),
	}
}

// NodeLog is the log file of one of a node's daemons (containerd, kubelet,
// kube-proxy).
func (c Config) NodeLog(n Node, daemon string) string {
	return filepath.Join(c.nodePaths(n).logs, daemon+".log")
}

// Kubeconfig is the admin kubeconfig of the running cluster. Its server,
// https://10.0.0.2:6443 (or [fd00:10::2]), is reachable only inside the
// namespaces.
func (c Config) Kubeconfig() string { return c.paths().kubeconfig }

// ClientNetNS is the namespace the cluster's clients run in (kubectl, the
// tests' DNS queries, the e2e suite): the first node's, where the API
// server, pod addresses and Service addresses (through its kube-proxy) are
// all reachable, as on a machine of the cluster.
func (c Config) ClientNetNS() string { return c.Node(1).NetNS }

// netnsDirMarker exists while /run/netns is there because the cluster
// created it. It is outside run/, which each start removes.
func (c Config) netnsDirMarker() string { return filepath.Join(c.DataDir, "created-run-netns") }

func (c Config) bin(name string) string { return filepath.Join(c.BinDir, name) }
