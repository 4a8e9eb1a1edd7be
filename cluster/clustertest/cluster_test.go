package clustertest

import (
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
	c := startCluster(t, cluster.DefaultConfig("").Overlay)
	workload, err := os.ReadFile("testdata/workload.yaml")
	if err != nil {
		t.Fatal(err)
	}
	kubectl(t, c, workload, "apply", "-f", "-")
	waitPodsReady(t, c, "web-0", "db-0", "busybox", "glibc")
	webIP := serviceIP(t, c, "web")
	dbIP := podIP(t, c, "db-0")

	t.Run("the kubelet writes the cluster DNS into resolv.conf", func(t *testing.T) {
		got := execIn(t, c, "busybox", "cat", "/etc/resolv.conf")
		for _, want := range []string{
			"nameserver " + cluster.ClusterDNS,
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
		lookupsWhileDeleting(t, c)
	})
}

// lookupsWhileDeleting runs loadLookups lookups at about 20 a second from
// a pod, deletes one kubesky pod once they have started, waits for the
// Deployment to replace it, and counts the failed lookups.
func lookupsWhileDeleting(t *testing.T, c *cluster.Cluster) {
	script := fmt.Sprintf(`i=0; while [ $i -lt %d ]; do
  if nslookup web.default.svc.cluster.local >/dev/null 2>&1; then echo ok; else echo FAIL $(date +%%T); fi
  i=$((i+1)); usleep %d; done; echo END`, loadLookups, loadPauseUS)
	pod := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: load, namespace: default}
spec:
  restartPolicy: Never
  containers: [{name: main, image: %s, imagePullPolicy: Never, command: ["sh", "-c", %q]}]
`, cluster.ClientImage, script)
	kubectl(t, c, []byte(pod), "apply", "-f", "-")
	waitForLog(t, c, "load", func(log string) bool { return strings.Count(log, "\n") >= 40 })
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
	log := waitForLog(t, c, "load", func(log string) bool { return strings.Contains(log, "END") })
	ok, failed := strings.Count(log, "ok\n"), strings.Count(log, "FAIL")
	t.Logf("pod deletion under load: %d lookups, %d failed", ok+failed, failed)
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
	list, err := c.Client.CoreV1().Pods("kube-system").List(t.Context(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=kubesky"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := range list.Items {
		if podReady(&list.Items[i]) {
			names = append(names, list.Items[i].Name)
		}
	}
	return names
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
