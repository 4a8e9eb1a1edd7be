package clustertest

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesky/kubesky/cluster"
	"github.com/kubesky/kubesky/internal/polltest"
)

// startCluster starts the cluster for one test with topology deployed (""
// deploys no DNS: the test deploys one) and stops it at the end, then checks
// the host is as it was before. It skips (saying why) unless
// KUBESKY_CLUSTER_TEST=1, and fails when not root.
func startCluster(t *testing.T, topology string) *cluster.Cluster {
	t.Helper()
	return startClusterFor(t, cmp.Or(topology, cluster.TopologyPerPod), topology != "")
}

// startClusterFor is startCluster with the kubelets configured for
// topology (its clusterDNS), which Start deploys only when deploy is set.
func startClusterFor(t *testing.T, topology string, deploy bool) *cluster.Cluster {
	t.Helper()
	cfg := testConfig(t).WithTopology(topology)
	if !deploy {
		cfg.Overlay = ""
	}
	before := readHostState(t)
	t.Cleanup(func() { checkHostUnchanged(t, before) })
	c, err := cluster.Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, n := range cfg.AllNodes() {
				for _, name := range []string{"kubelet", "containerd", "kube-proxy"} {
					t.Logf("--- end of %s's %s.log:\n%s", n.Name, name, tailFile(cfg.NodeLog(n, name)))
				}
			}
		}
		c.Stop()
	})
	return c
}

// testConfig is the cluster configuration of the environment make's
// cluster targets set (KUBESKY_CLUSTER_NODES, KUBESKY_CLUSTER_IP_FAMILY),
// progress printed through t. It skips (saying why) unless
// KUBESKY_CLUSTER_TEST=1, and fails when not root.
func testConfig(t *testing.T) cluster.Config {
	t.Helper()
	if os.Getenv("KUBESKY_CLUSTER_TEST") != "1" {
		t.Skip("a real cluster needs root and minutes: run with KUBESKY_CLUSTER_TEST=1 (make test-cluster)")
	}
	if os.Geteuid() != 0 {
		t.Fatal("the cluster tests need root")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cfg := cluster.DefaultConfig(repo)
	cfg.Out = testWriter{t}
	if family := os.Getenv("KUBESKY_CLUSTER_IP_FAMILY"); family != "" {
		cfg = cfg.WithIPFamily(family)
	}
	if n := os.Getenv("KUBESKY_CLUSTER_NODES"); n != "" {
		if cfg.Nodes, err = strconv.Atoi(n); err != nil {
			t.Fatalf("KUBESKY_CLUSTER_NODES=%q: %v", n, err)
		}
	}
	return cfg
}

// testWriter prints the cluster's progress through t.Log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func tailFile(path string) string {
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-30):], "\n")
}

// kubectl runs kubectl in the cluster with stdin, failing the test on error.
func kubectl(t *testing.T, c *cluster.Cluster, stdin []byte, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := c.Cfg().Kubectl(ctx, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// exec runs a command in a pod's container and returns its output, whatever
// its exit status (a failed lookup is data, not an error).
func execIn(t *testing.T, c *cluster.Cluster, pod string, command ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	out, _ := c.Cfg().Kubectl(ctx, append([]string{"exec", pod, "--"}, command...)...).CombinedOutput()
	return string(out)
}

// waitPodsReady waits until the named pods in default are Ready.
func waitPodsReady(t *testing.T, c *cluster.Cluster, names ...string) {
	t.Helper()
	polltest.Every(t, 2*time.Minute, apiPoll, "pods ready", func() error {
		for _, name := range names {
			pod, err := c.Client.CoreV1().Pods("default").Get(t.Context(), name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if !podReady(pod) {
				return fmt.Errorf("pod %s: %s, not Ready", name, pod.Status.Phase)
			}
		}
		return nil
	})
}

func podReady(pod *corev1.Pod) bool {
	for _, cond := range pod.Status.Conditions {
		if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
			return pod.DeletionTimestamp == nil
		}
	}
	return false
}

// apiPoll is the interval between two checks of a condition on the
// cluster (polltest.Every): most ask the API server.
const apiPoll = 200 * time.Millisecond

// hostState is what the cluster must not change on the host.
type hostState struct {
	sysctls       map[string]string
	varLibKubelet bool
	netns         string
	runNetns      bool // /run/netns exists
	podCgroups    []string
	kubeChains    int
}

func readHostState(t *testing.T) hostState {
	t.Helper()
	s := hostState{sysctls: map[string]string{}}
	for _, path := range cluster.MaskedSysctls() {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		s.sysctls[path] = strings.TrimSpace(string(data))
	}
	_, err := os.Stat("/var/lib/kubelet")
	s.varLibKubelet = err == nil
	out, _ := exec.Command("ip", "netns", "list").Output()
	s.netns = string(out)
	_, err = os.Stat("/run/netns")
	s.runNetns = err == nil
	s.podCgroups = cluster.PodCgroups()
	rules, _ := exec.Command("iptables-save").Output()
	s.kubeChains = strings.Count(string(rules), "KUBE-")
	return s
}

// checkHostUnchanged compares the host with what it was before the cluster.
func checkHostUnchanged(t *testing.T, before hostState) {
	t.Helper()
	after := readHostState(t)
	for path, value := range before.sysctls {
		if after.sysctls[path] != value {
			t.Errorf("%s is %s after the cluster, was %s", path, after.sysctls[path], value)
		}
	}
	if after.varLibKubelet != before.varLibKubelet {
		t.Errorf("/var/lib/kubelet exists: %v, before: %v", after.varLibKubelet, before.varLibKubelet)
	}
	if after.netns != before.netns {
		t.Errorf("network namespaces after the cluster:\n%s\nbefore:\n%s", after.netns, before.netns)
	}
	if after.runNetns != before.runNetns {
		t.Errorf("/run/netns exists: %v, before: %v", after.runNetns, before.runNetns)
	}
	if len(after.podCgroups) > len(before.podCgroups) {
		t.Errorf("pod cgroups left behind: %v", after.podCgroups)
	}
	if after.kubeChains != before.kubeChains {
		t.Errorf("host iptables: %d KUBE- mentions, before %d", after.kubeChains, before.kubeChains)
	}
	t.Logf("host unchanged: %d kernel settings, /var/lib/kubelet, network namespaces, pod cgroups, iptables", len(before.sysctls))
}
