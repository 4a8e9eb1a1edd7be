package clustertest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubesky/kubesky/cluster"
	"github.com/kubesky/kubesky/internal/polltest"
)

// helmTimeout bounds each `helm install/upgrade/uninstall --wait`.
const helmTimeout = 5 * time.Minute

// TestHelm installs deploy/helm/kubesky (the per-pod topology) with bin/helm
// into a cluster with no DNS yet, upgrades it with changed resources while a
// pod resolves a name about 20 times a second (no lookup may fail), then
// uninstalls it and checks that nothing labelled kubesky remains.
//
// The chart's skydns listens on IPv4 (0.0.0.0:53), so the test needs an IPv4
// cluster.
func TestHelm(t *testing.T) {
	if family := os.Getenv("KUBESKY_CLUSTER_IP_FAMILY"); family != "" && family != cluster.IPv4 {
		t.Skipf("the chart's skydns listens on IPv4; KUBESKY_CLUSTER_IP_FAMILY=%s", family)
	}
	c := startCluster(t, "")
	workload, err := os.ReadFile("testdata/workload.yaml")
	if err != nil {
		t.Fatal(err)
	}
	clusterDNS := c.Cfg().Addresses().ClusterDNS
	helm(t, c, "install", "kubesky", chartDir(c), "-n", "kube-system", "--wait", "--timeout", helmTimeout.String(),
		"--set", "image.pullPolicy=Never", "--set", "service.clusterIP="+clusterDNS)
	kubectl(t, c, workload, "apply", "-f", "-")
	waitPodsReady(t, c, "web-0")
	t.Run("an upgrade with changed resources under load fails no lookup", func(t *testing.T) {
		lookupsDuring(t, c, "load-helm", "", func() {
			helm(t, c, "upgrade", "kubesky", chartDir(c), "-n", "kube-system", "--reuse-values", "--wait",
				"--timeout", helmTimeout.String(), "--set", "resources.skydns.requests.cpu=150m")
		})
		got := kubectl(t, c, nil, "-n", "kube-system", "get", "deployment", "kubesky",
			"-o", `jsonpath={.spec.template.spec.containers[?(@.name=="skydns")].resources.requests.cpu}`)
		if got != "150m" {
			t.Errorf("skydns's cpu request after the upgrade is %q, want 150m", got)
		}
	})
	t.Run("uninstall leaves nothing labelled app.kubernetes.io/name=kubesky", func(t *testing.T) {
		helm(t, c, "uninstall", "kubesky", "-n", "kube-system", "--wait", "--timeout", helmTimeout.String())
		polltest.Within(t, helmTimeout, "no kubesky objects", func() error {
			if left := kubeskyObjects(t, c); left != "" {
				return fmt.Errorf("left: %s", left)
			}
			return nil
		})
	})
}

// kubeskyObjects lists what is labelled app.kubernetes.io/name=kubesky in
// every namespace, of every kind the chart makes, and their pods.
func kubeskyObjects(t *testing.T, c *cluster.Cluster) string {
	t.Helper()
	kinds := "deployments,statefulsets,pods,services,endpointslices,poddisruptionbudgets,serviceaccounts," +
		"roles,rolebindings,clusterroles,clusterrolebindings,horizontalpodautoscalers,secrets,configmaps"
	out := kubectl(t, c, nil, "get", kinds, "-A", "-l", "app.kubernetes.io/name=kubesky", "-o", "name")
	var left []string
	for _, line := range strings.Split(out, "\n") {
		if line != "" && !strings.HasPrefix(line, "No resources found") {
			left = append(left, line)
		}
	}
	return strings.Join(left, " ")
}

// chartDir is the chart's path in the cluster's repository.
func chartDir(c *cluster.Cluster) string {
	return filepath.Join(c.Cfg().RepoDir, "deploy", "helm", "kubesky")
}

// helm runs bin/helm with args in the cluster's network namespace, against
// its kubeconfig, with its state in a temporary directory, and fails t
// unless it succeeds.
func helm(t *testing.T, c *cluster.Cluster, args ...string) {
	t.Helper()
	cfg := c.Cfg()
	bin := filepath.Join(cfg.BinDir, "helm")
	argv := append([]string{"--net=" + cluster.NetNSPath(cfg.NetNS), "--", bin, "--kubeconfig=" + cfg.Kubeconfig()}, args...)
	cmd := exec.CommandContext(t.Context(), "nsenter", argv...)
	home := t.TempDir()
	cmd.Env = append(cmd.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
