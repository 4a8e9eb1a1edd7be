package clustertest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesky/kubesky/cluster"
)

// conformanceTimeout bounds the e2e run.
const conformanceTimeout = 40 * time.Minute

// offlineSkips are the [sig-network] DNS specs that cannot run here, each
// with the reason: the whole list `make conformance-full` skips.
var offlineSkips = []struct{ spec, reason string }{
	{`should provide DNS for the cluster \[Provider:GCE\]`, "needs the GCE cloud provider (it checks the metadata server's name, metadata.google.internal)"},
}

// skipPattern is the --ginkgo.skip regular expression of offlineSkips.
func skipPattern() string {
	var specs []string
	for _, s := range offlineSkips {
		specs = append(specs, s.spec)
	}
	return strings.Join(specs, "|")
}

// TestConformance runs Kubernetes' own e2e tests selected by
// KUBESKY_CONFORMANCE_FOCUS (make conformance: every [sig-network] DNS test
// tagged [Conformance]; make conformance-full: every DNS test but
// offlineSkips) with bin/e2e.test inside the clients' namespace, against
// the topology KUBESKY_CONFORMANCE_TOPOLOGY names (per-pod, the default, or
// shared), and logs each spec's outcome.
func TestConformance(t *testing.T) {
	focus := os.Getenv("KUBESKY_CONFORMANCE_FOCUS")
	if focus == "" {
		focus = `\[sig-network\] DNS.*\[Conformance\]`
	}
	c := startTopology(t, os.Getenv("KUBESKY_CONFORMANCE_TOPOLOGY"))
	checkIPFamily(t, c)
	runConformance(t, c, focus)
}

// conformanceFirst runs the e2e specs KUBESKY_CLUSTER_CONFORMANCE selects
// as the first subtest of a topology's test, in its cluster (make
// test-cluster or test-node-local WITH_CONFORMANCE=1): CI checks both
// with one cluster each instead of two. Without it, it says so and
// returns.
func conformanceFirst(t *testing.T, c *cluster.Cluster) {
	t.Helper()
	focus := os.Getenv("KUBESKY_CLUSTER_CONFORMANCE")
	if focus == "" {
		t.Log("Kubernetes' DNS e2e tests not run in this cluster: make conformance runs them, or WITH_CONFORMANCE=1")
		return
	}
	t.Run("Kubernetes' DNS e2e tests pass first", func(t *testing.T) {
		checkIPFamily(t, c)
		runConformance(t, c, focus)
	})
}

// runConformance runs bin/e2e.test's specs matching focus against c and
// fails the test unless every one that ran passed.
func runConformance(t *testing.T, c *cluster.Cluster, focus string) {
	t.Helper()
	e2e, err := filepath.Abs(filepath.Join(c.Cfg().BinDir, "e2e.test"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(e2e); err != nil {
		t.Fatalf("%v: build it with integration/tools/build.sh conformance", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), conformanceTimeout)
	defer cancel()
	dir := t.TempDir()
	out, report := filepath.Join(dir, "e2e.log"), filepath.Join(dir, "e2e.json")
	args := []string{"--net=" + cluster.NetNSPath(c.Cfg().ClientNetNS()), "--", e2e,
		"--kubeconfig=" + c.Cfg().Kubeconfig(),
		"--provider=local",
		"--ginkgo.focus=" + focus,
		"--ginkgo.skip=" + skipPattern(),
		"--ginkgo.no-color",
		"--ginkgo.v",
		"--ginkgo.json-report=" + report,
		"--test.timeout=" + conformanceTimeout.String(),
	}
	log, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, "nsenter", args...)
	cmd.Stdout, cmd.Stderr = log, log
	runErr := cmd.Run()
	log.Close()
	if _, err := os.Stat(report); err != nil {
		t.Fatalf("e2e.test wrote no report (%v); the end of its output:\n%s", runErr, tailFile(out))
	}
	summary, passed, ran := specSummary(t, report)
	t.Logf("e2e: %d passed of %d\n%s", passed, ran, summary)
	for _, s := range offlineSkips {
		t.Logf("skipped: %s: %s", s.spec, s.reason)
	}
	if ran == 0 {
		t.Errorf("no spec matched %q", focus)
	}
	if runErr != nil {
		t.Errorf("e2e.test: %v; the end of its output:\n%s", runErr, tailFile(out))
	}
}

// specReport is the part of a ginkgo JSON report (--ginkgo.json-report)
// the summary needs.
type specReport struct {
	ContainerHierarchyTexts []string
	LeafNodeText            string
	LeafNodeLabels          []string
	State                   string
	RunTime                 time.Duration
	Failure                 struct{ Message string }
}

// specSummary returns one line per spec that ran (its outcome, time and
// name, and the failure's message), and the count passed.
func specSummary(t *testing.T, path string) (string, int, int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the e2e report: %v", err)
	}
	var suites []struct{ SpecReports []specReport }
	if err := json.Unmarshal(data, &suites); err != nil {
		t.Fatalf("the e2e report %s: %v", path, err)
	}
	var lines []string
	ran, passed := 0, 0
	for _, suite := range suites {
		for _, spec := range suite.SpecReports {
			if spec.LeafNodeText == "" || spec.State == "skipped" {
				continue
			}
			ran++
			if spec.State == "passed" {
				passed++
			}
			name := strings.Join(append(spec.ContainerHierarchyTexts, spec.LeafNodeText), " ")
			line := fmt.Sprintf("%-7s %6s  %s", spec.State, spec.RunTime.Round(time.Second), name)
			if spec.Failure.Message != "" {
				line += "\n        " + strings.ReplaceAll(spec.Failure.Message, "\n", "\n        ")
			}
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "\n"), passed, ran
}

// startTopology starts the cluster with the named topology deployed
// (per-pod when name is empty).
func startTopology(t *testing.T, name string) *cluster.Cluster {
	t.Helper()
	if name == "" {
		name = cluster.TopologyPerPod
	}
	return startCluster(t, name)
}

// checkIPFamily fails the test unless the kubernetes Service and the DNS
// pods have addresses of the cluster's family only: the e2e framework
// picks A or AAAA, in-addr.arpa or ip6.arpa, from the kubernetes Service.
func checkIPFamily(t *testing.T, c *cluster.Cluster) {
	t.Helper()
	want := c.Cfg().IPFamily
	svc, err := c.Client.CoreV1().Services("default").Get(t.Context(), "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	addrs := append([]string(nil), svc.Spec.ClusterIPs...)
	pods, err := c.Client.CoreV1().Pods("kube-system").List(t.Context(), metav1.ListOptions{LabelSelector: "k8s-app=kube-dns"})
	if err != nil {
		t.Fatal(err)
	}
	for _, pod := range pods.Items {
		for _, ip := range pod.Status.PodIPs {
			addrs = append(addrs, ip.IP)
		}
	}
	for _, addr := range addrs {
		if cluster.FamilyOf(addr) != want {
			t.Fatalf("%s is not %s: the kubernetes Service and the DNS pods have %v", addr, want, addrs)
		}
	}
	t.Logf("an %s cluster: the kubernetes Service and the DNS pods have %v", want, addrs)
}
