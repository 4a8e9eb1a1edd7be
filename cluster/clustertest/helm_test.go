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
	"github.com/kubesky/kubesky/skydns/nodelocal"
)

// helmTimeout bounds each `helm install/upgrade/uninstall --wait`.
const helmTimeout = 5 * time.Minute

// A chartRun is one topology's pass through the chart's life: install,
// an upgrade changing one value, uninstall.
type chartRun struct {
	topology string
	// workload and container are where upgrade's cpu request shows.
	workload, container string
	// upgrade is the value `helm upgrade` sets to 150m.
	upgrade string
	// lookupsDuring resolves a name from a pod named name while disrupt
	// runs, failing t if a lookup fails.
	lookupsDuring func(t *testing.T, c *cluster.Cluster, name string, disrupt func())
}

// The topologies TestHelm and TestHelmNodeLocal install. Node-local's
// lookups are glibc's (testdata/lookups.c, as TestNodeLocal's): busybox's
// nslookup, with the node address and the Service as nameservers, made 277
// lookups in 3 minutes there, far below lookupsDuring's pace.
var (
	perPodRun    = chartRun{cluster.TopologyPerPod, "deployment/kubesky", "skydns", "resources.skydns.requests.cpu", busyboxLookups}
	sharedRun    = chartRun{cluster.TopologyShared, "deployment/" + skydnsDeploy, "skydns", "resources.skydns.requests.cpu", busyboxLookups}
	nodeLocalRun = chartRun{cluster.TopologyNodeLocal, "daemonset/" + nodeLocalSet, "skydns", "nodeLocal.resources.requests.cpu", glibcLookups}
)

// busyboxLookups is lookupsDuring from a pod on any node.
func busyboxLookups(t *testing.T, c *cluster.Cluster, name string, disrupt func()) {
	lookupsDuring(t, c, name, "", disrupt)
}

// glibcLookups runs measuredLookupsOnNode from a pod on the first node:
// none may fail (lookups over a second are logged: TestNodeLocal holds
// the DaemonSet's rollout to that).
func glibcLookups(t *testing.T, c *cluster.Cluster, name string, disrupt func()) {
	if s := measuredLookupsOnNode(t, c, buildLookups(t, c), name, c.Cfg().Node(1).Name, disrupt); s.Failed != 0 {
		t.Errorf("%d lookups failed, want none:\n%s", s.Failed, s.problems)
	}
}

// TestHelm runs CoreDNS in a cluster with no DNS yet and moves it to
// deploy/helm/kubesky and back (migrateFromCoreDNS); then it installs the
// chart with bin/helm, the per-pod topology, then the shared one: each is
// installed, upgraded with a changed cpu request while a pod resolves a
// name about 20 times a second (no lookup may fail), then uninstalled,
// leaving nothing labelled kubesky.
//
// The chart's skydns listens on IPv4 (0.0.0.0:53), so the test needs an IPv4
// cluster.
func TestHelm(t *testing.T) {
	requireIPv4(t)
	c := startCluster(t, "")
	applyWorkload(t, c)
	t.Run("from CoreDNS to the chart reading its Corefile and back", func(t *testing.T) { migrateFromCoreDNS(t, c) })
	t.Run(perPodRun.topology, func(t *testing.T) { perPodRun.check(t, c) })
	prepareSharedEtcd(t, c)
	t.Run(sharedRun.topology, func(t *testing.T) { sharedRun.check(t, c) })
}

// TestHelmNodeLocal does what TestHelm does with the node-local topology,
// in a cluster whose kubelets list the node-local address before the
// kube-dns Service; after the uninstall, as docs/node-local.md says, each
// node keeps the address and the notrack table, and a query to the address
// is refused at once (so a pod's resolver moves to its next nameserver).
func TestHelmNodeLocal(t *testing.T) {
	requireIPv4(t)
	c := startClusterFor(t, cluster.TopologyNodeLocal, false)
	applyWorkload(t, c)
	prepareSharedEtcd(t, c)
	nodeLocalRun.check(t, c)
	t.Run("each node keeps the address and the notrack table, and refuses queries at once", func(t *testing.T) {
		for _, n := range c.Cfg().AllNodes() {
			checkNodeLocalLeftovers(t, c, n)
		}
	})
}

func requireIPv4(t *testing.T) {
	t.Helper()
	if family := os.Getenv("KUBESKY_CLUSTER_IP_FAMILY"); family != "" && family != cluster.IPv4 {
		t.Skipf("the chart's skydns listens on IPv4; KUBESKY_CLUSTER_IP_FAMILY=%s", family)
	}
}

// applyWorkload creates testdata/workload.yaml's Services and pods, which
// the lookups resolve.
func applyWorkload(t *testing.T, c *cluster.Cluster) {
	t.Helper()
	workload, err := os.ReadFile("testdata/workload.yaml")
	if err != nil {
		t.Fatal(err)
	}
	kubectl(t, c, workload, "apply", "-f", "-")
	waitPodsReady(t, c, "web-0")
}

// prepareSharedEtcd makes what the chart's shared etcd expects, as the
// cluster's overlays have it: the TLS Secret, the local volumes and their
// StorageClass.
func prepareSharedEtcd(t *testing.T, c *cluster.Cluster) {
	t.Helper()
	if err := c.PrepareSharedEtcd(t.Context()); err != nil {
		t.Fatal(err)
	}
	class, err := os.ReadFile(filepath.Join(c.Cfg().RepoDir, "cluster", "shared-local", "storageclass.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	kubectl(t, c, class, "apply", "-f", "-")
}

// check installs the chart with r's topology, upgrades it under lookups,
// and uninstalls it.
func (r chartRun) check(t *testing.T, c *cluster.Cluster) {
	start := time.Now()
	helm(t, c, "install", "kubesky", chartDir(c), "-n", "kube-system", "--wait", "--timeout", helmTimeout.String(),
		"--set", "topology="+r.topology, "--set", "image.pullPolicy=Never",
		"--set", "service.clusterIP="+c.Cfg().Addresses().ClusterDNS,
		"--set", "etcd.storageClassName=kubesky-local", "--set", "etcd.persistentVolumeClaimRetentionPolicy.whenDeleted=Delete")
	t.Logf("helm install --wait: %s", time.Since(start).Round(time.Second))
	t.Run("an upgrade with a changed cpu request under load fails no lookup", func(t *testing.T) {
		r.lookupsDuring(t, c, "load-helm-"+r.topology, func() {
			helm(t, c, "upgrade", "kubesky", chartDir(c), "-n", "kube-system", "--reuse-values", "--wait",
				"--timeout", helmTimeout.String(), "--set", r.upgrade+"=150m")
		})
		got := kubectl(t, c, nil, "-n", "kube-system", "get", r.workload,
			"-o", fmt.Sprintf(`jsonpath={.spec.template.spec.containers[?(@.name=="%s")].resources.requests.cpu}`, r.container))
		if got != "150m" {
			t.Errorf("%s's cpu request after the upgrade is %q, want 150m", r.container, got)
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
// every namespace, of every kind the chart makes, and their pods and
// volume claims.
func kubeskyObjects(t *testing.T, c *cluster.Cluster) string {
	t.Helper()
	kinds := "deployments,statefulsets,daemonsets,jobs,pods,services,endpointslices,poddisruptionbudgets,serviceaccounts," +
		"roles,rolebindings,clusterroles,clusterrolebindings,horizontalpodautoscalers,secrets,configmaps,persistentvolumeclaims"
	out := kubectl(t, c, nil, "get", kinds, "-A", "-l", "app.kubernetes.io/name=kubesky", "-o", "name")
	var left []string
	for _, line := range strings.Split(out, "\n") {
		if line != "" && !strings.HasPrefix(line, "No resources found") {
			left = append(left, line)
		}
	}
	return strings.Join(left, " ")
}

// checkNodeLocalLeftovers checks what skydns leaves on node n after it
// exits (docs/node-local.md): the address on its interface and the
// notrack table, with nothing listening, so that a query to the address
// is refused rather than unanswered.
func checkNodeLocalLeftovers(t *testing.T, c *cluster.Cluster, n cluster.Node) {
	t.Helper()
	addr := c.Cfg().Addresses().NodeLocalDNS
	for _, command := range [][]string{
		{"ip", "-o", "addr", "show", "dev", "kubesky0"},
		{"nft", "list", "table", "inet", nodelocal.TableName},
	} {
		out, err := exec.Command("ip", append([]string{"netns", "exec", n.NetNS}, command...)...).CombinedOutput()
		if err != nil || !strings.Contains(string(out), addr) {
			t.Errorf("%s: %s: %v, want %s in\n%s", n.Name, strings.Join(command, " "), err, addr, out)
		}
	}
	start := time.Now()
	out, _ := exec.Command("ip", "netns", "exec", n.NetNS, "dig", "+tries=1", "+time=3", "@"+addr, "web.default.svc.cluster.local").CombinedOutput()
	if took := time.Since(start); !strings.Contains(string(out), "refused") || took > time.Second {
		t.Errorf("%s: dig @%s took %s, want refused within 1 s:\n%s", n.Name, addr, took.Round(time.Millisecond), out)
	}
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
