package integration

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesky/kubesky/integration/harness"
)

// chart is the Helm chart, relative to this package.
var chart = filepath.Join("..", "deploy", "helm", "kubesky")

// helm runs bin/helm with args and its state in a temporary directory,
// failing t unless it succeeds; it returns the standard output.
func helm(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), harness.Binary("helm"), args...)
	home := t.TempDir()
	cmd.Env = append(cmd.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return out
}

// helmValues are the values TestHelmChart lints and applies: each topology
// with its defaults, and with the options that add or change objects.
var helmValues = map[string]string{
	"per-pod":    "topology=per-pod",
	"shared":     "topology=shared",
	"node-local": "topology=node-local",
	"node-local with options": "topology=node-local,nodeLocal.address=169.254.20.11,nodeLocal.priorityClassName=," +
		"nodeLocal.tolerations=null,nodeLocal.updateStrategy.type=OnDelete,nodeLocal.updateStrategy.rollingUpdate=null," +
		"etcd.relay.replicaCount=3,nodeLocal.resources.requests.cpu=75m,clusterset.enabled=true,clusterset.clusterID=east",
	"per-pod with options": "topology=per-pod,hpa.enabled=true,podDisruptionBudget.minAvailable=1," +
		"podDisruptionBudget.maxUnavailable=null,extraSecrets[0].name=extra,extraSecrets[0].mountPath=/etc/extra," +
		"etcd.prefix=/east,clusterset.enabled=true,clusterset.clusterID=east,clusterset.broker.endpoints[0]=https://broker.example.com:2379",
	"shared with options": "topology=shared,hpa.enabled=true,replicaCount=3,etcd.storage=2Gi,etcd.storageClassName=local," +
		"etcd.persistentVolumeClaimRetentionPolicy.whenDeleted=Delete," +
		"affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]" +
		".matchExpressions[0].key=kubernetes.io/os," +
		"affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]" +
		".matchExpressions[0].operator=Exists",
}

// TestHelmChart lints the chart and applies what `helm template` renders for
// each topology to a real kube-apiserver with `kubectl apply
// --dry-run=server`, which validates every object as a create would.
func TestHelmChart(t *testing.T) {
	harness.RequireBinaries(t, "helm", "kubectl")
	etcd := harness.StartEtcd(t)
	api := harness.StartAPIServer(t, etcd.Endpoint)
	for name, set := range helmValues {
		t.Run(name+" lints and applies", func(t *testing.T) {
			helm(t, "lint", "--strict", chart, "--set", set)
			manifest := helm(t, "template", "kubesky", chart, "-n", "kube-system", "--set", set)
			cmd := exec.CommandContext(t.Context(), harness.Binary("kubectl"), "--kubeconfig", api.Kubeconfig,
				"apply", "--dry-run=server", "-f", "-")
			cmd.Stdin = bytes.NewReader(manifest)
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "service/kube-dns created (server dry run)") {
				t.Fatalf("kubectl apply --dry-run=server: %v\n%s", err, out)
			}
		})
	}
	t.Run("install, upgrade and uninstall leave nothing", func(t *testing.T) {
		checkHelmLifecycle(t, api)
	})
	t.Run("a wrong value fails with its name", func(t *testing.T) {
		cmd := exec.CommandContext(t.Context(), harness.Binary("helm"), "template", chart, "--set", "topology=node-cache")
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "topology") {
			t.Fatalf("helm template with topology=node-cache: %v\n%s", err, out)
		}
	})
}

// checkHelmLifecycle installs the chart into api with helm, upgrades it
// with another replicaCount, uninstalls it, and checks the Deployment at
// each step and that no object labelled kubesky remains. Without a kubelet
// no pod runs, so helm does not wait.
func checkHelmLifecycle(t *testing.T, api *harness.APIServer) {
	kc := "--kubeconfig=" + api.Kubeconfig
	helm(t, kc, "install", "kubesky", chart, "-n", "kube-system")
	requireReplicas(t, api, 2)
	helm(t, kc, "upgrade", "kubesky", chart, "-n", "kube-system", "--reuse-values", "--set", "replicaCount=3")
	requireReplicas(t, api, 3)
	if installed := labelledKubesky(t, api); len(installed) != 8 {
		t.Fatalf("installed %v, want 8 objects", installed)
	}
	helm(t, kc, "uninstall", "kubesky", "-n", "kube-system")
	if left := labelledKubesky(t, api); len(left) > 0 {
		t.Fatalf("left after helm uninstall: %v", left)
	}
}

func requireReplicas(t *testing.T, api *harness.APIServer, want int32) {
	t.Helper()
	d, err := api.Client.AppsV1().Deployments("kube-system").Get(t.Context(), "kubesky", metav1.GetOptions{})
	if err != nil || d.Spec.Replicas == nil || *d.Spec.Replicas != want {
		t.Fatalf("Deployment kubesky: %v, want %d replicas", err, want)
	}
}

// labelledKubesky names the objects of the kinds the chart makes that are
// labelled app.kubernetes.io/name=kubesky.
func labelledKubesky(t *testing.T, api *harness.APIServer) []string {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), harness.Binary("kubectl"), "--kubeconfig", api.Kubeconfig,
		"get", "deployments,services,poddisruptionbudgets,serviceaccounts,roles,rolebindings,clusterroles,clusterrolebindings",
		"-A", "-l", "app.kubernetes.io/name=kubesky", "-o", "name").Output()
	if err != nil {
		t.Fatalf("kubectl get: %v", err)
	}
	return strings.Fields(string(out))
}
