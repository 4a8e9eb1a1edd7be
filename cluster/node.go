package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// maskedSysctls are the kernel settings the kubelet sets that are not
// per-namespace, with the values it wants. Inside the node's mount
// namespace each file is covered by a file holding that value, so the
// kubelet finds them as it wants them and the host keeps its own.
var maskedSysctls = map[string]string{
	"vm/overcommit_memory":      "1",
	"vm/panic_on_oom":           "0",
	"kernel/panic":              "10",
	"kernel/panic_on_oops":      "1",
	"kernel/keys/root_maxkeys":  "1000000",
	"kernel/keys/root_maxbytes": "25000000",
}

// MaskedSysctls lists the /proc/sys paths the node masks, for tests that
// check the host's values are unchanged.
func MaskedSysctls() []string {
	var list []string
	for name := range maskedSysctls {
		list = append(list, "/proc/sys/"+name)
	}
	return list
}

// privateDirs are the host directories the node's mount namespace covers
// with empty tmpfs mounts: what the kubelet, containerd, CNI plugins and
// iptables write outside their configured directories lands there.
var privateDirs = []string{"/run", "/var/lib", "/var/log"}

// holderScript is the shell run by the process that holds the node's mount
// namespace: it covers privateDirs and the masked sysctls, then sleeps.
func holderScript(p nodePaths) string {
	var b strings.Builder
	b.WriteString("set -e\n")
	for _, dir := range privateDirs {
		fmt.Fprintf(&b, "mount -t tmpfs -o mode=755 tmpfs %s\n", dir)
	}
	b.WriteString("mkdir -p /run/netns /run/lock\n")
	for name := range maskedSysctls {
		fmt.Fprintf(&b, "mount --bind %s /proc/sys/%s\n", filepath.Join(p.mask, strings.ReplaceAll(name, "/", "_")), name)
	}
	b.WriteString("echo holder ready\nexec sleep infinity\n")
	return b.String()
}

// writeNodeFiles writes node n's configuration of containerd, CNI, the
// kubelet and kube-proxy, and its mask files.
func (c Config) writeNodeFiles(n Node) error {
	p := c.nodePaths(n)
	for _, dir := range []string{p.logs, p.mask, filepath.Join(p.cni, "net.d"), p.kubelet, filepath.Join(p.containerd, "opt")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	files := map[string]string{
		filepath.Join(p.containerd, "config.toml"):           containerdConfig(p),
		filepath.Join(p.cni, "net.d", "10-kubesky.conflist"): cniConfig(n, p),
		filepath.Join(p.kubelet, "config.yaml"):              kubeletConfig(n, p, c.clusterDNS()),
		filepath.Join(p.kubelet, "resolv.conf"):              "nameserver " + c.Addresses().Upstream + "\n",
		p.kubeProxy:                                          kubeProxyConfig(n, c.Addresses().ClusterCIDR, c.Kubeconfig()),
		p.holder:                                             holderScript(p),
	}
	for name, value := range maskedSysctls {
		files[filepath.Join(p.mask, strings.ReplaceAll(name, "/", "_"))] = value + "\n"
	}
	for path, content := range files {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// containerdConfig: its own root, state and socket; the CRI with the pause
// image built here, the CNI bridge, and no negative oom_score_adj (this
// machine kind refuses those even to root).
func containerdConfig(p nodePaths) string {
	return fmt.Sprintf(`version = 2
root = "%[1]s/root"
state = "%[1]s/state"
[grpc]
  address = "%[2]s"
[ttrpc]
  address = "%[2]s.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "%[1]s/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "%[3]s"
  stream_server_address = "127.0.0.1"
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "%[4]s/net.d"
`, p.containerd, p.socket, pauseImage, p.cni)
}

// cniConfig: one bridge with host-local addresses from the node's pod range;
// no masquerade (pods reach the other nodes' pods by the routes between the
// nodes, and there is nowhere else to go).
func cniConfig(n Node, p nodePaths) string {
	return fmt.Sprintf(`{"cniVersion": "0.4.0", "name": "kubesky", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": %q, "gateway": %q}]],
            "routes": [{"dst": %q}], "dataDir": %q}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
`, n.PodCIDR, n.gateway, defaultRoute(n.IP), filepath.Join(p.cni, "ipam"))
}

// kubeletConfig: cgroupfs (containerd 1.6 does not report a driver) under
// the node's own cgroup root, cgroup v1 allowed, the cluster DNS, the
// stand-in upstream as the node's resolver, and no image garbage
// collection (the images cannot be pulled again).
func kubeletConfig(n Node, p nodePaths, clusterDNS []string) string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
cgroupRoot: /%[5]s
failSwapOn: false
failCgroupV1: false
containerRuntimeEndpoint: unix://%[1]s
clusterDNS: ["%[2]s"]
clusterDomain: cluster.local
resolvConf: %[3]s/resolv.conf
authentication: {anonymous: {enabled: true}, webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
address: %[4]s
healthzBindAddress: 127.0.0.1
healthzPort: 10248
readOnlyPort: 0
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {"memory.available": "100Mi", "nodefs.available": "1%%", "imagefs.available": "1%%"}
podLogsDir: %[3]s/pod-logs
volumePluginDir: %[3]s/volume-plugins
serializeImagePulls: false
`, p.socket, strings.Join(clusterDNS, `", "`), p.kubelet, n.IP, n.CgroupRoot)
}

// kubeProxyConfig: iptables mode, leaving the global conntrack settings
// alone; metrics and health on loopback.
func kubeProxyConfig(n Node, clusterCIDR, kubeconfig string) string {
	return fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clusterCIDR: %s
hostnameOverride: %s
clientConnection: {kubeconfig: %s}
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
metricsBindAddress: 127.0.0.1:10249
healthzBindAddress: 127.0.0.1:10256
`, clusterCIDR, n.Name, kubeconfig)
}

// defaultRoute is the default route of ip's family.
func defaultRoute(ip string) string {
	if FamilyOf(ip) == IPv6 {
		return "::/0"
	}
	return "0.0.0.0/0"
}
