package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHolderScriptCoversTheHostPaths(t *testing.T) {
	cfg := DefaultConfig("/repo")
	script := holderScript(cfg.nodePaths(cfg.Node(1)))
	for _, want := range []string{
		"mount -t tmpfs -o mode=755 tmpfs /run\n",
		"mount -t tmpfs -o mode=755 tmpfs /var/lib\n",
		"mount --bind /repo/.cache/cluster/run/kubesky-node-1/mask/vm_overcommit_memory /proc/sys/vm/overcommit_memory\n",
		"mount --bind /repo/.cache/cluster/run/kubesky-node-1/mask/kernel_panic_on_oops /proc/sys/kernel/panic_on_oops\n",
	} {
		if !strings.Contains(script, want) {
			t.Errorf("holder script lacks %q:\n%s", want, script)
		}
	}
	if !strings.HasSuffix(script, "exec sleep infinity\n") {
		t.Errorf("holder script does not end by sleeping:\n%s", script)
	}
}

func TestNodeConfigsUseTheNodesOwnDirectory(t *testing.T) {
	cfg := DefaultConfig("/repo")
	n := cfg.Node(2)
	p := cfg.nodePaths(n)
	for name, text := range map[string]string{
		"containerd": containerdConfig(p),
		"kubelet":    kubeletConfig(n, p, cfg.clusterDNS()),
		"cni":        cniConfig(n, p),
	} {
		if !strings.Contains(text, "/repo/.cache/cluster/run/kubesky-node-2/") {
			t.Errorf("%s config does not point into the node's directory:\n%s", name, text)
		}
	}
	for name, want := range map[string]string{
		"kubelet":    "cgroupRoot: /kubesky-node-2\n",
		"cni":        `"subnet": "10.244.2.0/24", "gateway": "10.244.2.1"`,
		"kube-proxy": "hostnameOverride: kubesky-node-2\n",
	} {
		text := map[string]string{"kubelet": kubeletConfig(n, p, cfg.clusterDNS()), "cni": cniConfig(n, p), "kube-proxy": kubeProxyConfig(n, "10.244.0.0/16", cfg.Kubeconfig())}[name]
		if !strings.Contains(text, want) {
			t.Errorf("%s config lacks %q:\n%s", name, want, text)
		}
	}
	if !strings.Contains(containerdConfig(p), "restrict_oom_score_adj = true") {
		t.Error("containerd may ask for a negative oom_score_adj, which this machine kind refuses")
	}
}

func TestEveryNodeIsJoinedToTheBridgeWithRoutesToTheOthers(t *testing.T) {
	cfg := DefaultConfig("/repo")
	cfg.Nodes = 3
	nodes := cfg.AllNodes()
	steps := nodeLinkSteps(cfg.NetNS, cfg.Addresses(), nodes[1], nodes)
	var text []string
	for _, s := range steps {
		text = append(text, strings.Join(s, " "))
	}
	all := strings.Join(text, "\n")
	for _, want := range []string{
		"netns add kubesky-node-2",
		"-n kubesky link set veth-node-2 master kbr0 up",
		"-4 -n kubesky-node-2 addr add 10.0.0.12/24 dev eth0",
		"-4 -n kubesky route add 10.244.2.0/24 via 10.0.0.12",
		"-4 -n kubesky-node-2 route add 10.244.1.0/24 via 10.0.0.11",
		"-4 -n kubesky-node-2 route add 10.244.3.0/24 via 10.0.0.13",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("the steps for node 2 lack %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "-n kubesky-node-2 route add 10.244.2.0/24 ") {
		t.Errorf("node 2 routes its own pod range elsewhere:\n%s", all)
	}
}

func TestNodeCountIsBounded(t *testing.T) {
	for _, n := range []int{0, -1, MaxNodes + 1} {
		cfg := DefaultConfig("/repo")
		cfg.Nodes = n
		if err := cfg.Validate(); err == nil {
			t.Errorf("%d nodes accepted", n)
		}
	}
	cfg := DefaultConfig("/repo")
	cfg.Nodes = 3
	if err := cfg.Validate(); err != nil {
		t.Error(err)
	}
	if zones := []string{cfg.Node(1).Zone, cfg.Node(2).Zone, cfg.Node(3).Zone}; zones[0] == zones[1] || zones[0] != zones[2] {
		t.Errorf("zones of 3 nodes: %v, want two zones with nodes 1 and 3 sharing one", zones)
	}
}

func TestAnIPv6ClusterHasOnlyIPv6Addresses(t *testing.T) {
	cfg := DefaultConfig("/repo")
	cfg.Nodes, cfg.IPFamily = 2, IPv6
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	n := cfg.Node(2)
	p := cfg.nodePaths(n)
	a := cfg.Addresses()
	for name, text := range map[string]string{
		"cni":        cniConfig(n, p),
		"kubelet":    kubeletConfig(n, p, cfg.clusterDNS()),
		"kube-proxy": kubeProxyConfig(n, a.ClusterCIDR, cfg.Kubeconfig()),
		"ip":         fmt.Sprint(nodeLinkSteps(cfg.NetNS, a, n, cfg.AllNodes())),
	} {
		if strings.Contains(text, "10.") {
			t.Errorf("%s of an IPv6 cluster holds an IPv4 address:\n%s", name, text)
		}
	}
	for name, want := range map[string]string{
		"cni":     `"subnet": "fd00:10:244:2::/64", "gateway": "fd00:10:244:2::1"`,
		"kubelet": `clusterDNS: ["fd00:10:96::a"]`,
		"ip":      "-6 -n kubesky-node-2 route add fd00:10:244:1::/64 via fd00:10::11",
	} {
		text := map[string]string{"cni": cniConfig(n, p), "kubelet": kubeletConfig(n, p, cfg.clusterDNS()), "ip": fmt.Sprint(nodeLinkSteps(cfg.NetNS, a, n, cfg.AllNodes()))}[name]
		if !strings.Contains(text, want) {
			t.Errorf("%s lacks %q:\n%s", name, want, text)
		}
	}
	cfg.IPFamily = "ipv5"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), `"ipv5"`) {
		t.Errorf("IP family ipv5: %v", err)
	}
}

func TestMemoryReportListsLargestFirstThenTheTotal(t *testing.T) {
	m := MemoryReport{Programs: map[string]int64{"kubelet": 300, "etcd": 80}, Pods: map[string]int64{"kubesky-node-1": 120}}
	want := "   300 MB  kubelet\n   120 MB  pods on kubesky-node-1\n    80 MB  etcd\n   500 MB  in all"
	if got := m.String(); got != want {
		t.Errorf("report:\n%s\nwant:\n%s", got, want)
	}
}

func TestMemoryStatReadsTheNumberAfterItsKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.stat")
	if err := os.WriteFile(path, []byte("cache 8192\nrss 1024\ntotal_rss 4096\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := memoryStat(path, "total_rss"); got != 4096 {
		t.Errorf("total_rss: %d", got)
	}
	if got := memoryStat(filepath.Join(t.TempDir(), "gone"), "total_rss"); got != 0 {
		t.Errorf("a missing file: %d", got)
	}
}

func TestNodeLocalPodsAskTheirNodeFirstThenTheService(t *testing.T) {
	cfg := DefaultConfig("/repo").WithTopology(TopologyNodeLocal)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	n := cfg.Node(1)
	got := kubeletConfig(n, cfg.nodePaths(n), cfg.clusterDNS())
	if want := `clusterDNS: ["169.254.20.10", "10.96.0.10"]`; !strings.Contains(got, want) {
		t.Errorf("kubelet config lacks %s:\n%s", want, got)
	}
	if cfg.Overlay != Topologies[TopologyNodeLocal] {
		t.Errorf("overlay %q, want %q", cfg.Overlay, Topologies[TopologyNodeLocal])
	}
}

func TestATopologyIsOneOfThree(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{DefaultConfig("").WithTopology("mesh"), `topology: "mesh" is not one of node-local, per-pod, shared`},
		{DefaultConfig("").WithIPFamily(IPv6).WithTopology(TopologyNodeLocal), "topology: node-local has no node-local address for ipv6 here"},
	} {
		if err := tc.cfg.Validate(); err == nil || err.Error() != tc.want {
			t.Errorf("Validate() = %v, want %s", err, tc.want)
		}
	}
}
