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
	// node is true for the node's daemons, which run in the holder's
	// private mount namespace as well as the network namespace.
	node bool
}

// controlPlane are etcd, the API server and the stand-in upstream resolver:
// processes that need only the network namespace.
func (c *Cluster) controlPlane() []component {
	p := c.cfg.paths()
	api := kubeproc.APIServer{
		Port: APIPort, Bind: "0.0.0.0", Advertise: NodeIP,
		EtcdEndpoint: etcdClient, ServiceCIDRs: ServiceCIDR, Files: c.files,
	}
	return []component{
		{
			name: "etcd",
			argv: []string{c.cfg.bin("etcd"), "--name=kubesky", "--data-dir=" + p.etcd,
				"--listen-client-urls=" + etcdClient, "--advertise-client-urls=" + etcdClient,
				"--listen-peer-urls=" + etcdPeer, "--initial-advertise-peer-urls=" + etcdPeer,
				"--initial-cluster=kubesky=" + etcdPeer, "--log-level=warn"},
			ready: func(ctx context.Context) error { return c.httpOK(ctx, etcdClient+"/health") },
		},
		{
			name:  "kube-apiserver",
			argv:  append([]string{c.cfg.bin("kube-apiserver")}, append(api.Args(), "--allow-privileged=true", "--kubelet-preferred-address-types=InternalIP")...),
			ready: c.apiserverReady,
		},
		{
			name:  "upstream",
			argv:  []string{c.cfg.bin("kubesky-cluster"), "upstream", "--addr=" + UpstreamIP + ":53"},
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
		"--root-ca-file="+c.files.CAFile, "--service-cluster-ip-range="+ServiceCIDR, "--profiling=false")
	sched := append([]string{c.cfg.bin("kube-scheduler")}, kubeconfigs...)
	sched = append(sched, "--leader-elect=false", "--bind-address=127.0.0.1", "--secure-port=10259",
		"--cert-dir="+filepath.Join(p.run, "scheduler"), "--profiling=false")
	return []component{
		{name: "kube-controller-manager", argv: kcm, ready: func(ctx context.Context) error { return c.httpOK(ctx, "https://127.0.0.1:10257/healthz") }},
		{name: "kube-scheduler", argv: sched, ready: func(ctx context.Context) error { return c.httpOK(ctx, "https://127.0.0.1:10259/healthz") }},
	}
}

// node are containerd, the kubelet and kube-proxy, in the holder's mount
// namespace.
func (c *Cluster) node() []component {
	p := c.cfg.paths()
	return []component{
		{
			name: "containerd", node: true,
			argv:  []string{"containerd", "--config", filepath.Join(p.containerd, "config.toml")},
			ready: func(context.Context) error { return run("ctr", "--address", p.socket, "version") },
		},
		{
			name: "kubelet", node: true,
			argv: []string{c.cfg.bin("kubelet"), "--config=" + filepath.Join(p.kubelet, "config.yaml"),
				"--kubeconfig=" + p.kubeconfig, "--root-dir=" + filepath.Join(p.kubelet, "root"),
				"--cert-dir=" + filepath.Join(p.kubelet, "pki"), "--hostname-override=" + NodeName, "--node-ip=" + NodeIP},
			ready: c.nodeReady,
		},
		{
			name: "kube-proxy", node: true,
			argv:  []string{c.cfg.bin("kube-proxy"), "--config=" + filepath.Join(p.run, "kube-proxy.yaml")},
			ready: func(ctx context.Context) error { return c.httpOK(ctx, "http://127.0.0.1:10256/healthz") },
		},
	}
}

// spec is how comp is started: through nsenter, into the network namespace
// only, or into the holder's network and mount namespaces.
func (c *Cluster) spec(comp component) kubeproc.Spec {
	enter := []string{"--net=" + NetNSPath(c.cfg.NetNS)}
	if comp.node {
		enter = []string{"-t", strconv.Itoa(c.holder.PID()), "--net", "--mount"}
	}
	return kubeproc.Spec{
		Name:      comp.name,
		Path:      "nsenter",
		Args:      append(append(enter, "--"), comp.argv...),
		Log:       filepath.Join(c.cfg.paths().logs, comp.name+".log"),
		StartLine: fmt.Sprintf("=== kubesky-cluster: %q", comp.argv),
	}
}
