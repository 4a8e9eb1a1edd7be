package clustertest

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubesky/kubesky/cluster"
	"github.com/kubesky/kubesky/deploy"
	"github.com/kubesky/kubesky/internal/polltest"
)

// The shared topology's names (deploy/shared-etcd).
const (
	etcdSet        = "kubesky-etcd"
	kube2skyDeploy = "kubesky-kube2sky"
	skydnsDeploy   = "kubesky-skydns"
)

// TestSharedEtcdTopology deploys deploy/shared-etcd (through
// cluster/overlay-shared) as its README says, then, while a pod resolves a
// name about 20 times a second and Services change 10 times a second,
// deletes the etcd leader, then the kube2sky leader, then a skydns pod. No
// lookup may fail, and every change the API server acknowledged must be in
// DNS within maxPropagation. Before that, it checks the zone's name server
// and runs kubesky explain against the cluster (explain_test.go).
func TestSharedEtcdTopology(t *testing.T) {
	c := startCluster(t, cluster.TopologyShared)
	t.Run("kubectl kustomize renders the objects deploy.SharedEtcd reads", func(t *testing.T) {
		checkRender(t, c)
	})
	t.Run("the overlay runs 3 etcd members on bound volumes, 2 relays, 2 kube2sky, 2 skydns, 3 PDBs and the HPA", func(t *testing.T) {
		checkSharedTopology(t, c)
	})
	t.Run("each component's replicas run on different nodes", func(t *testing.T) {
		requireNodes(t, c, 3)
		for _, component := range []string{"etcd", "etcd-relay", "kube2sky", "skydns"} {
			nodes := nodesOf(t, c, "app.kubernetes.io/name=kubesky,app.kubernetes.io/component="+component)
			if distinct := slices.Compact(slices.Sorted(slices.Values(nodes))); len(nodes) < 2 || len(distinct) != len(nodes) {
				t.Errorf("%s pods on nodes %v, want each on its own", component, nodes)
			}
			t.Logf("%s pods on %v", component, nodes)
		}
	})
	t.Run("etcd serves TLS and wants a client certificate", func(t *testing.T) {
		checkEtcdTLS(t, c)
	})
	t.Run("the zone apex's NS is the kube-dns Service's address", func(t *testing.T) {
		checkNameServer(t, c)
	})
	t.Run("kubesky explain traces each kind of name, every replica current", func(t *testing.T) {
		checkExplain(t, c)
	})
	t.Run("security: every reader credential only reads, on every path", func(t *testing.T) {
		checkSecurity(t, c, "skydns")
	})
	t.Run("etcd leader, kube2sky leader and a skydns pod deleted under load and churn", func(t *testing.T) {
		disruptUnderLoad(t, c)
	})
}

// checkRender compares what `kubectl kustomize deploy/shared-etcd` renders
// with what deploy.SharedEtcd decodes, object by object (kind, namespace,
// name), so that the overlay's patches and the Go reading agree.
func checkRender(t *testing.T, c *cluster.Cluster) {
	dir := filepath.Join(c.Cfg().RepoDir, "deploy", "shared-etcd")
	out, err := exec.Command(filepath.Join(c.Cfg().BinDir, "kubectl"), "kustomize", dir).Output()
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v", dir, err)
	}
	rendered, err := deploy.Decode("kustomize output", out)
	if err != nil {
		t.Fatal(err)
	}
	read, err := deploy.SharedEtcd()
	if err != nil {
		t.Fatal(err)
	}
	got, want := describeAll(rendered), describeAll(read)
	if !slices.Equal(got, want) {
		t.Fatalf("kustomize renders %v\ndeploy.SharedEtcd reads %v", got, want)
	}
	t.Logf("%d objects: %v", len(got), got)
}

func describeAll(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, obj := range objs {
		out = append(out, deploy.Describe(obj))
	}
	slices.Sort(out)
	return out
}

// checkSharedTopology checks the objects the overlay made and their state.
func checkSharedTopology(t *testing.T, c *cluster.Cluster) {
	ctx := t.Context()
	for component, want := range map[string]int{"etcd": 3, "etcd-relay": 2, "kube2sky": 2, "skydns": 2} {
		if got := readyPods(t, c, component); len(got) != want {
			t.Errorf("%s: %d ready pods %v, want %d", component, len(got), got, want)
		}
	}
	claims, err := c.Client.CoreV1().PersistentVolumeClaims("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/component=etcd"})
	if err != nil {
		t.Fatal(err)
	}
	for _, claim := range claims.Items {
		if claim.Status.Phase != corev1.ClaimBound {
			t.Errorf("claim %s: %s", claim.Name, claim.Status.Phase)
		}
	}
	if len(claims.Items) != 3 {
		t.Errorf("%d etcd volume claims, want 3", len(claims.Items))
	}
	pdbs, err := c.Client.PolicyV1().PodDisruptionBudgets("kube-system").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, pdb := range pdbs.Items {
		names = append(names, fmt.Sprintf("%s(%d allowed)", pdb.Name, pdb.Status.DisruptionsAllowed))
	}
	if len(pdbs.Items) != 3 {
		t.Errorf("PodDisruptionBudgets %v, want kubesky-etcd, kubesky-kube2sky, kubesky-skydns", names)
	}
	if _, err := c.Client.AutoscalingV2().HorizontalPodAutoscalers("kube-system").Get(ctx, skydnsDeploy, metav1.GetOptions{}); err != nil {
		t.Error(err)
	}
	if leaders := kube2skyLeaders(t, c); len(leaders) != 1 {
		t.Errorf("kube2sky leaders %v, want one", leaders)
	}
	t.Logf("3 etcd members on %d bound claims, 2 kube2sky (1 leader), 2 skydns; PDBs %v", len(claims.Items), names)
}

// readyPods lists the ready kube-system pods of one component.
func readyPods(t *testing.T, c *cluster.Cluster, component string) []corev1.Pod {
	t.Helper()
	list, err := c.Client.CoreV1().Pods("kube-system").List(t.Context(), metav1.ListOptions{
		LabelSelector: "app.kubernetes.io/name=kubesky,app.kubernetes.io/component=" + component,
	})
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

// kube2skyLeaders names the ready kube2sky pods whose kube2sky_leader is 1.
func kube2skyLeaders(t *testing.T, c *cluster.Cluster) []string {
	return podsWithMetric(t, c, "kube2sky", "8082", "kube2sky_leader")
}

// etcdLeaders names the ready etcd pods whose etcd_server_is_leader is 1.
func etcdLeaders(t *testing.T, c *cluster.Cluster) []string {
	return podsWithMetric(t, c, "etcd", "2381", "etcd_server_is_leader")
}

// podsWithMetric names the ready pods of component whose metric, read
// from http://<pod IP>:port/metrics, is 1.
func podsWithMetric(t *testing.T, c *cluster.Cluster, component, port, metric string) []string {
	t.Helper()
	var names []string
	for _, pod := range readyPods(t, c, component) {
		body, err := httpGet(t, c, "http://"+pod.Status.PodIP+":"+port+"/metrics", nil)
		if err != nil {
			t.Logf("%s: %v", pod.Name, err)
			continue
		}
		if strings.Contains("\n"+body, "\n"+metric+" 1\n") {
			names = append(names, pod.Name)
		}
	}
	return names
}

// deleteAndWait deletes the named pod of component, waits until it is gone
// and every kubesky workload is whole again, and returns how long that took.
func deleteAndWait(t *testing.T, c *cluster.Cluster, component, victim string, want int) time.Duration {
	t.Helper()
	pod, err := c.Client.CoreV1().Pods("kube-system").Get(t.Context(), victim, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := c.Client.CoreV1().Pods("kube-system").Delete(t.Context(), victim, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	polltest.Every(t, 3*time.Minute, apiPoll, "the deleted "+component+" pod replaced", func() error {
		var names []string
		for _, p := range readyPods(t, c, component) {
			if p.UID == pod.UID {
				return fmt.Errorf("%s still ready", victim)
			}
			names = append(names, p.Name)
		}
		if len(names) != want {
			return fmt.Errorf("%s: ready %v, want %d", component, names, want)
		}
		return c.KubeskyAvailable(t.Context())
	})
	return time.Since(start)
}

// nodesOf lists the node of each pod in kube-system that selector matches.
func nodesOf(t *testing.T, c *cluster.Cluster, selector string) []string {
	t.Helper()
	pods, err := c.Client.CoreV1().Pods("kube-system").List(t.Context(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	var nodes []string
	for _, pod := range pods.Items {
		nodes = append(nodes, pod.Spec.NodeName)
	}
	return nodes
}
