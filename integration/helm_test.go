package integration

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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
	"per-pod": "topology=per-pod",
	"shared":  "topology=shared",
	"per-pod with options": "topology=per-pod,hpa.enabled=true,podDisruptionBudget.minAvailable=1," +
		"podDisruptionBudget.maxUnavailable=null,extraSecrets[0].name=extra,extraSecrets[0].mountPath=/etc/extra",
	"shared with options": "topology=shared,hpa.enabled=true,replicaCount=3,etcd.storage=2Gi," +
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
	t.Run("a wrong value fails with its name", func(t *testing.T) {
		cmd := exec.CommandContext(t.Context(), harness.Binary("helm"), "template", chart, "--set", "topology=node-local")
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "topology") {
			t.Fatalf("helm template with topology=node-local: %v\n%s", err, out)
		}
	})
}
