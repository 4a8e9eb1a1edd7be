package clustertest

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesky/kubesky/cluster"
	"github.com/kubesky/kubesky/internal/polltest"
)

// The pod-deletion load: lookups, and the pause after each (busybox usleep).
const (
	loadLookups = 600
	loadPauseUS = 45000 // with the lookup itself, about 20 lookups a second
)

func TestCluster(t *testing.T) {
	c := startCluster(t, cluster.TopologyPerPod)
	conformanceFirst(t, c)
	workload, err := os.ReadFile("testdata/workload.yaml")
	if err != nil {
		t.Fatal(err)
	}
	kubectl(t, c, workload, "apply", "-f", "-")
	waitPodsReady(t, c, "web-0", "db-0", "busybox", "glibc")
	webIP := serviceIP(t, c, "web")
	dbIP := podIP(t, c, "db-0")
	t.Logf("resident memory with %d nodes, kubesky and the workload running:\n%s", c.Cfg().Nodes, c.Memory())

	t.Run("the kubelet writes the cluster DNS into resolv.conf", func(t *testing.T) {
		got := execIn(t, c, "busybox", "cat", "/etc/resolv.conf")
		for _, want := range []string{
			"nameserver " + c.Cfg().Addresses().ClusterDNS,
			"search default.svc.cluster.local svc.cluster.local cluster.local",
			"options ndots:5",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("resolv.conf lacks %q:\n%s", want, got)
			}
		}
	})
	t.Run("busybox's resolver through kube-proxy", func(t *testing.T) {
		checkLookups(t, c, []string{"busybox", "nslookup"}, map[string]string{
			"web":                               webIP,
			"web.default.svc.cluster.local":     webIP,
			"db-0.db.default.svc.cluster.local": dbIP,
			"docs.default.svc.cluster.local":    cluster.UpstreamNames["www.example.org."],
			"www.example.org":                   cluster.UpstreamNames["www.example.org."],
		}, func(out, want string) bool {
			return regexp.MustCompile(`Address: ` + regexp.QuoteMeta(want) + `\b`).MatchString(out)
		})
	})
	t.Run("an SRV record per named port", func(t *testing.T) {
		out := execIn(t, c, "busybox", "nslookup", "-type=SRV", "_http._tcp.web.default.svc.cluster.local")
		if !strings.Contains(out, "80 web.default.svc.cluster.local") {
			t.Errorf("SRV _http._tcp.web:\n%s", out)
		}
	})
	t.Run("glibc's resolver (getent hosts) through the search path", func(t *testing.T) {
		checkLookups(t, c, []string{"glibc", "getent", "hosts"}, map[string]string{
			"web":             webIP,
			"web.default":     webIP,
			"db-0.db":         dbIP,
			"docs":            cluster.UpstreamNames["www.example.org."],
			"www.example.org": cluster.UpstreamNames["www.example.org."],
		}, func(out, want string) bool { return strings.HasPrefix(out, want+" ") })
	})
	t.Run("deleting a kubesky pod under load fails no lookup", func(t *testing.T) {
		lookupsDuring(t, c, "load", "", func() { deleteKubeskyPod(t, c) })
	})
	t.Run("the replicas run on different nodes", func(t *testing.T) {
		requireNodes(t, c, 2)
		nodes := kubeskyNodes(t, c)
		if len(nodes) != 2 || nodes[0] == nodes[1] {
			t.Errorf("kubesky pods on nodes %v, want 2 different ones", nodes)
		}
		t.Logf("kubesky pods on %v", nodes)
	})
	t.Run("draining a node under load fails no lookup from another node", func(t *testing.T) {
		requireNodes(t, c, 3)
		drained := kubeskyNodes(t, c)[0]
		client := otherNode(t, c, drained)
		lookupsDuring(t, c, "load-drain", client, func() { drainNode(t, c, drained) })
	})
}

// requireNodes skips the test, saying why, when the cluster has fewer than
// n nodes.
func requireNodes(t *testing.T, c *cluster.Cluster, n int) {
	t.Helper()
	if c.Cfg().Nodes < n {
		t.Skipf("needs %d nodes, the cluster has %d (make test-cluster NODES=%d)", n, c.Cfg().Nodes, n)
	}
}

// otherNode is a node of the cluster other than not.
func otherNode(t *testing.T, c *cluster.Cluster, not string) string {
	t.Helper()
	for _, n := range c.Cfg().AllNodes() {
		if n.Name != not {
			return n.Name
		}
	}
	t.Fatalf("no node other than %s", not)
	return ""
}

// deleteKubeskyPod deletes one kubesky pod and waits until the Deployment
// has 2 ready pods again, neither of them the deleted one.
func deleteKubeskyPod(t *testing.T, c *cluster.Cluster) {
	victim := kubeskyPods(t, c)[0]
	start := time.Now()
	if err := c.Client.CoreV1().Pods("kube-system").Delete(t.Context(), victim, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	polltest.Every(t, 2*time.Minute, apiPoll, "the deleted kubesky pod replaced", func() error {
		pods := kubeskyPods(t, c)
		if len(pods) != 2 || pods[0] == victim || pods[1] == victim {
			return fmt.Errorf("kubesky pods ready: %v", pods)
		}
		return nil
	})
	t.Logf("kubesky pod %s deleted; the Deployment had 2 ready pods again %s later", victim, time.Since(start).Round(100*time.Millisecond))
}

// drainNode drains node with kubectl drain (evictions, which the
// PodDisruptionBudget gates), waits until 2 kubesky pods are ready on
// other nodes, then makes the node schedulable again.
func drainNode(t *testing.T, c *cluster.Cluster, node string) {
	start := time.Now()
	out := kubectl(t, c, nil, "drain", node, "--ignore-daemonsets", "--delete-emptydir-data", "--force", "--timeout=3m")
	t.Cleanup(func() { uncordon(t, c, node) })
	t.Logf("kubectl drain %s:\n%s", node, out)
	polltest.Every(t, 2*time.Minute, apiPoll, "kubesky pods ready on the other nodes", func() error {
		nodes := kubeskyNodes(t, c)
		if len(nodes) != 2 || nodes[0] == node || nodes[1] == node || nodes[0] == nodes[1] {
			return fmt.Errorf("ready kubesky pods on %v", nodes)
		}
		return nil
	})
	t.Logf("node %s drained; 2 kubesky pods ready on %v %s after the drain began", node, kubeskyNodes(t, c), time.Since(start).Round(100*time.Millisecond))
}

// uncordon makes node schedulable again, at the end of a test (whose
// context is done by then).
func uncordon(t *testing.T, c *cluster.Cluster, node string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if out, err := c.Cfg().Kubectl(ctx, "uncordon", node).CombinedOutput(); err != nil {
		t.Errorf("kubectl uncordon %s: %v\n%s", node, err, out)
	}
}

// lookupsDuring runs loadLookups lookups at about 20 a second from a pod
// named name (on node, when it is not empty), calls disrupt once they have
// started, and fails the test if any lookup failed.
func lookupsDuring(t *testing.T, c *cluster.Cluster, name, node string, disrupt func()) {
	script := fmt.Sprintf(`i=0; while [ $i -lt %d ]; do
  if nslookup web.default.svc.cluster.local >/dev/null 2>&1; then echo ok; else echo FAIL $(date +%%T); fi
  i=$((i+1)); usleep %d; done; echo END`, loadLookups, loadPauseUS)
	pod := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: default}
spec:
  nodeName: %q
  restartPolicy: Never
  containers: [{name: main, image: %s, imagePullPolicy: Never, command: ["sh", "-c", %q]}]
`, name, node, cluster.ClientImage, script)
	kubectl(t, c, []byte(pod), "apply", "-f", "-")
	waitForLog(t, c, name, func(log string) bool { return strings.Count(log, "\n") >= 40 })
	disrupt()
	log := waitForLog(t, c, name, func(log string) bool { return strings.Contains(log, "END") })
	ok, failed := strings.Count(log, "ok\n"), strings.Count(log, "FAIL")
	t.Logf("%s: %d lookups, %d failed", t.Name(), ok+failed, failed)
	if failed != 0 || ok != loadLookups {
		t.Errorf("%d lookups ok, %d failed, want %d ok:\n%s", ok, failed, loadLookups, grepFail(log))
	}
}

func grepFail(log string) string {
	var lines []string
	for _, line := range strings.Split(log, "\n") {
		if strings.HasPrefix(line, "FAIL") {
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "\n")
}

// checkLookups runs lookup (a pod, then a command) with each name of want
// as its last argument, and fails the test unless found accepts the output
// for the name's address.
func checkLookups(t *testing.T, c *cluster.Cluster, lookup []string, want map[string]string, found func(out, ip string) bool) {
	t.Helper()
	for name, ip := range want {
		out := execIn(t, c, lookup[0], append(lookup[1:len(lookup):len(lookup)], name)...)
		if !found(out, ip) {
			t.Errorf("%s %s: want %s in\n%s", strings.Join(lookup[1:], " "), name, ip, out)
		}
	}
}

// waitForLog polls a pod's log until done accepts it, and returns it.
func waitForLog(t *testing.T, c *cluster.Cluster, pod string, done func(string) bool) string {
	t.Helper()
	var log string
	polltest.Every(t, 3*time.Minute, apiPoll, "pod "+pod+"'s log", func() error {
		data, err := c.Client.CoreV1().Pods("default").GetLogs(pod, &corev1.PodLogOptions{}).DoRaw(t.Context())
		if err != nil {
			return err
		}
		if log = string(data); !done(log) {
			return fmt.Errorf("pod %s: %d log lines so far", pod, strings.Count(log, "\n"))
		}
		return nil
	})
	return log
}

// kubeskyPods lists the ready kubesky pods.
func kubeskyPods(t *testing.T, c *cluster.Cluster) []string {
	t.Helper()
	var names []string
	for _, pod := range readyKubeskyPods(t, c) {
		names = append(names, pod.Name)
	}
	return names
}

// kubeskyNodes lists the nodes of the ready kubesky pods, one per pod.
func kubeskyNodes(t *testing.T, c *cluster.Cluster) []string {
	t.Helper()
	var nodes []string
	for _, pod := range readyKubeskyPods(t, c) {
		nodes = append(nodes, pod.Spec.NodeName)
	}
	return nodes
}

func readyKubeskyPods(t *testing.T, c *cluster.Cluster) []corev1.Pod {
	t.Helper()
	list, err := c.Client.CoreV1().Pods("kube-system").List(t.Context(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=kubesky"})
	if err != nil {
		t.Fatal(err)
	}
	var ready []corev1.Pod
	for i := range list.Items {
		if podReady(&list.Items[i]) {
			ready = append(ready, list.Items[i])
		}
	}
	return ready
}

func serviceIP(t *testing.T, c *cluster.Cluster, name string) string {
	t.Helper()
	svc, err := c.Client.CoreV1().Services("default").Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return svc.Spec.ClusterIP
}

func podIP(t *testing.T, c *cluster.Cluster, name string) string {
	t.Helper()
	pod, err := c.Client.CoreV1().Pods("default").Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pod.Status.PodIP
}
