package cluster

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/kubesky/kubesky/internal/kubeproc"
)

// component is one process of the cluster: how to start it and how to tell
// it is ready.
type component struct {
	name  string
	argv  []string // the command, binary first
	ready func(ctx context.Context) error
	// holder is set for a node's daemons, which run in its holder's network
	// namespace and private mount namespace; the others run in the control
	// plane's network namespace.
	holder *kubeproc.Process
	log    string // the log file
}

// FeatureGates are the API server's gates beyond the defaults:
// RelaxedServiceNameValidation lets a Service's name start with a digit,
// which one of Kubernetes' DNS e2e tests asks for.
const FeatureGates = "RelaxedServiceNameValidation=true"

// controlPlane are etcd, the API server and the stand-in upstream resolver:
// processes that need only the network namespace.
func (c *Cluster) controlPlane() []component {
	p := c.cfg.paths()
	a := c.cfg.Addresses()
	api := kubeproc.APIServer{
		Port: APIPort, Bind: a.anyAddress(), Advertise: a.ControlPlane,
		EtcdEndpoint: etcdClient, ServiceCIDRs: a.ServiceCIDR, Files: c.files,
	}
	return []component{
		{
			name: "etcd",
			argv: []string{c.cfg.bin("etcd"), "--name=kubesky", "--data-dir=" + p.etcd,
				"--listen-client-urls=" + etcdClient, "--advertise-client-urls=" + etcdClient,
				"--listen-peer-urls=" + etcdPeer, "--initial-advertise-peer-urls=" + etcdPeer,
				"--initial-cluster=kubesky=" + etcdPeer, "--log-level=warn"},
			ready: func(ctx context.Context) error { return c.httpOK(ctx, c.cfg.NetNS, etcdClient+"/health") },
		},
		{
			name: "kube-apiserver",
			argv: append([]string{c.cfg.bin("kube-apiserver")}, append(api.Args(), "--allow-privileged=true", "--kubelet-preferred-address-types=InternalIP",
				"--feature-gates="+FeatureGates)...),
			ready: c.apiserverReady,
		},
		{
			name:  "upstream",
			argv:  []string{c.cfg.bin("kubesky-cluster"), "upstream", "--addr=" + DNSPort(a.Upstream)},
			ready: c.upstreamReady,
		},
	}
}

// controllers are kube-controller-manager (ServiceAccounts, the node's
// taints, Deployments, EndpointSlices, the root CA ConfigMap) and
// kube-scheduler.
func (c *Cluster) controllers() []component {
	p := c.cfg.paths()
	kubeconfigs := []string{"--kubeconfig=" + p.kubeconfig, "--authentication-kubeconfig=" + p.kubeconfig, "--authorization-kubeconfig=" + p.kubeconfig}
	kcm := append([]string{c.cfg.bin("kube-controller-manager")}, kubeconfigs...)
	kcm = append(kcm, "--leader-elect=false", "--bind-address=127.0.0.1", "--secure-port=10257",
		"--cert-dir="+filepath.Join(p.run, "kcm"),
		"--controllers=*,-nodeipam", "--use-service-account-credentials=true",
		"--service-account-private-key-file="+c.files.ServiceAccountKeyFile,
		"--root-ca-file="+c.files.CAFile, "--service-cluster-ip-range="+c.cfg.Addresses().ServiceCIDR, "--profiling=false")
	sched := append([]string{c.cfg.bin("kube-scheduler")}, kubeconfigs...)
	sched = append(sched, "--leader-elect=false", "--bind-address=127.0.0.1", "--secure-port=10259",
		"--cert-dir="+filepath.Join(p.run, "scheduler"), "--profiling=false")
	return []component{
		{name: "kube-controller-manager", argv: kcm, ready: func(ctx context.Context) error { return c.httpOK(ctx, c.cfg.NetNS, "https://127.0.0.1:10257/healthz") }},
		{name: "kube-scheduler", argv: sched, ready: func(ctx context.Context) error { return c.httpOK(ctx, c.cfg.NetNS, "https://127.0.0.1:10259/healthz") }},
	}
}

// containerd is node n's container runtime, started before the images are
// imported into it.
func (c *Cluster) containerd(n Node) component {
	p := c.cfg.nodePaths(n)
	return component{
		name: n.Name + " containerd", holder: c.holders[n.Index], log: c.cfg.NodeLog(n, "containerd"),
		argv:  []string{"containerd", "--config", filepath.Join(p.containerd, "config.toml")},
		ready: func(context.Context) error { return run("ctr", "--address", p.socket, "version") },
	}
}

// kubeletAndProxy are node n's kubelet, labelled with its zone, and
// kube-proxy.
func (c *Cluster) kubeletAndProxy(n Node) []component {
	p := c.cfg.nodePaths(n)
	return []component{
		{
			name: n.Name + " kubelet", holder: c.holders[n.Index], log: c.cfg.NodeLog(n, "kubelet"),
			argv: []string{c.cfg.bin("kubelet"), "--config=" + filepath.Join(p.kubelet, "config.yaml"),
				"--kubeconfig=" + c.cfg.Kubeconfig(), "--root-dir=" + filepath.Join(p.kubelet, "root"),
				"--cert-dir=" + filepath.Join(p.kubelet, "pki"), "--hostname-override=" + n.Name, "--node-ip=" + n.IP,
				"--node-labels=" + ZoneLabel + "=" + n.Zone},
			ready: func(ctx context.Context) error { return c.nodeReady(ctx, n.Name) },
		},
		{
			name: n.Name + " kube-proxy", holder: c.holders[n.Index], log: c.cfg.NodeLog(n, "kube-proxy"),
			argv:  []string{c.cfg.bin("kube-proxy"), "--config=" + p.kubeProxy},
			ready: func(ctx context.Context) error { return c.httpOK(ctx, n.NetNS, "http://127.0.0.1:10256/healthz") },
		},
	}
}

// ZoneLabel is the well-known label that says a node's zone.
const ZoneLabel = "topology.kubernetes.io/zone"

// spec is how comp is started: through nsenter, into the control plane's
// network namespace, or into a node holder's network and mount namespaces.
func (c *Cluster) spec(comp component) kubeproc.Spec {
	enter := []string{"--net=" + NetNSPath(c.cfg.NetNS)}
	if comp.holder != nil {
		enter = []string{"-t", strconv.Itoa(comp.holder.PID()), "--net", "--mount"}
	}
	log := comp.log
	if log == "" {
		log = filepath.Join(c.cfg.paths().logs, comp.name+".log")
	}
	return kubeproc.Spec{
		Name:      comp.name,
		Path:      "nsenter",
		Args:      append(append(enter, "--"), comp.argv...),
		Log:       log,
		StartLine: fmt.Sprintf("=== kubesky-cluster: %q", comp.argv),
	}
}
