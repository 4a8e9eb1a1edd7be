package clustertest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesky/kubesky/cluster"
	"github.com/kubesky/kubesky/internal/polltest"
)

// migrateCorefile is a kubeadm Corefile as an operator customises it: hosts
// entries (inline, and in a file that is a key of its ConfigMap), verified
// pod names and endpoints named by their pods (kube2sky's settings), two
// rewrites, a template, loadbalance and a stub domain.
const migrateCorefile = `.:53 {
    errors
    health {
        lameduck 5s
    }
    ready
    hosts /etc/coredns/corphosts example.corp {
        10.0.0.5 db1.example.corp
        fallthrough
    }
    rewrite name www.default.svc.cluster.local web.default.svc.cluster.local
    rewrite name regex (.*)\.legacy\.cluster\.local {1}.default.svc.cluster.local answer auto
    template IN A blocked.example.org {
        rcode NXDOMAIN
    }
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        pods verified
        endpoint_pod_names
        fallthrough in-addr.arpa ip6.arpa
        ttl 30
    }
    prometheus :9153
    forward . /etc/resolv.conf {
        max_concurrent 1000
    }
    cache 30
    loop
    reload
    loadbalance
}
example.com:53 {
    errors
    cache 30
    forward . %s
}
`

// migrateQuestions are asked of the cluster's DNS before, during and after
// each switch: every kind of cluster name, rewritten and templated names,
// hosts entries, a stub domain's name and an upstream's.
var migrateQuestions = [][2]string{
	{"web.default.svc.cluster.local", "A"},
	{"web.default.svc.cluster.local", "AAAA"},
	{"db.default.svc.cluster.local", "A"},
	{"db-0.db.default.svc.cluster.local", "A"},
	{"docs.default.svc.cluster.local", "A"},
	{"_http._tcp.web.default.svc.cluster.local", "SRV"},
	{"kubernetes.default.svc.cluster.local", "A"},
	{"nothere.default.svc.cluster.local", "A"},
	{"www.default.svc.cluster.local", "A"},
	{"web.legacy.cluster.local", "A"},
	{"blocked.example.org", "A"},
	{"db1.example.corp", "A"},
	{"db2.example.corp", "A"},
	{"db3.example.corp", "A"},
	{"foo.example.com", "A"},
	{"www.example.org", "A"},
}

// migrateFromCoreDNS runs CoreDNS as kubeadm installs it, with
// migrateCorefile, records its answers, then installs the chart reading
// CoreDNS's ConfigMap in its place while a pod resolves (none may fail),
// and compares; then it moves back to CoreDNS the same way and compares
// again. It leaves neither behind.
func migrateFromCoreDNS(t *testing.T, c *cluster.Cluster) {
	waitPodsReady(t, c, "glibc")
	deployCoreDNS(t, c)
	before := askAll(t, c)
	if own := before["own pod name A"]; !strings.HasPrefix(own, "NOERROR; ") || !strings.Contains(own, " a ") {
		t.Fatalf("CoreDNS answered the asking pod's own verified name with %q, want its address", own)
	}
	t.Run("to kubesky, reading CoreDNS's ConfigMap, under load", func(t *testing.T) {
		busyboxLookups(t, c, "load-migrate-to", func() {
			for _, annotate := range [][]string{
				{"annotate", "service", "kube-dns", "meta.helm.sh/release-name=kubesky", "meta.helm.sh/release-namespace=kube-system"},
				{"label", "service", "kube-dns", "app.kubernetes.io/managed-by=Helm"},
			} {
				kubectl(t, c, nil, append([]string{"-n", "kube-system"}, annotate...)...)
			}
			helm(t, c, "install", "kubesky", chartDir(c), "-n", "kube-system", "--wait", "--timeout", helmTimeout.String(),
				"--set", "image.pullPolicy=Never", "--set", "service.clusterIP="+c.Cfg().Addresses().ClusterDNS,
				"--set", "coreDNS.configMap=coredns", "--set", "coreDNS.hostsDomain=example.corp", "--set", "service.keep=true")
			scaleCoreDNS(t, c, 0)
		})
		compareAnswers(t, before, askAll(t, c))
	})
	t.Run("back to CoreDNS, under load", func(t *testing.T) {
		busyboxLookups(t, c, "load-migrate-back", func() {
			scaleCoreDNS(t, c, 2)
			helm(t, c, "uninstall", "kubesky", "-n", "kube-system", "--wait", "--timeout", helmTimeout.String())
		})
		compareAnswers(t, before, askAll(t, c))
	})
	kubectl(t, c, nil, "-n", "kube-system", "delete", "service/kube-dns", "deployment/coredns", "configmap/coredns",
		"serviceaccount/coredns", "--wait")
	kubectl(t, c, nil, "delete", "clusterrole/system:coredns", "clusterrolebinding/system:coredns")
}

// deployCoreDNS applies CoreDNS as kubeadm does (its ServiceAccount and
// ClusterRole, the coredns ConfigMap, two replicas labelled k8s-app:
// kube-dns, the kube-dns Service) and waits until both are ready.
func deployCoreDNS(t *testing.T, c *cluster.Cluster) {
	t.Helper()
	a := c.Cfg().Addresses()
	manifest := fmt.Sprintf(`apiVersion: v1
kind: ServiceAccount
metadata: {name: coredns, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:coredns"}
rules:
  - {apiGroups: [""], resources: [endpoints, services, pods, namespaces], verbs: [list, watch]}
  - {apiGroups: [discovery.k8s.io], resources: [endpointslices], verbs: [list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "system:coredns"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:coredns"}
subjects: [{kind: ServiceAccount, name: coredns, namespace: kube-system}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: coredns, namespace: kube-system}
data:
  Corefile: %[1]q
  corphosts: "# the hosts file\n10.0.0.6 db2.example.corp\n"
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: coredns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  replicas: 2
  selector: {matchLabels: {k8s-app: kube-dns, app: coredns}}
  template:
    metadata: {labels: {k8s-app: kube-dns, app: coredns}}
    spec:
      serviceAccountName: coredns
      dnsPolicy: Default
      terminationGracePeriodSeconds: 30
      containers:
        - name: coredns
          image: %[2]s
          imagePullPolicy: Never
          command: ["/coredns", "-conf", "/etc/coredns/Corefile"]
          livenessProbe: {httpGet: {path: /health, port: 8080}, initialDelaySeconds: 60, timeoutSeconds: 5}
          readinessProbe: {httpGet: {path: /ready, port: 8181}, periodSeconds: 2}
          volumeMounts: [{name: config, mountPath: /etc/coredns}]
      volumes: [{name: config, configMap: {name: coredns}}]
---
apiVersion: v1
kind: Service
metadata: {name: kube-dns, namespace: kube-system, labels: {k8s-app: kube-dns, kubernetes.io/name: CoreDNS}}
spec:
  selector: {k8s-app: kube-dns}
  clusterIP: %[3]s
  ports:
    - {name: dns, port: 53, protocol: UDP}
    - {name: dns-tcp, port: 53, protocol: TCP}
`, fmt.Sprintf(migrateCorefile, a.Upstream), cluster.AgnhostImage, a.ClusterDNS)
	kubectl(t, c, []byte(manifest), "apply", "-f", "-")
	waitCoreDNS(t, c, 2)
	// Ready pods are not yet a Service that answers: kube-proxy programs
	// its rules after the EndpointSlice changes.
	polltest.Every(t, 2*time.Minute, apiPoll, "the kube-dns Service answering", func() error {
		if out := execIn(t, c, "glibc", "dig", "+short", "+tries=1", "+time=1", "web.default.svc.cluster.local"); !strings.HasPrefix(out, "10.") {
			return fmt.Errorf("dig: %q", out)
		}
		return nil
	})
}

// scaleCoreDNS sets CoreDNS's replicas and waits until exactly that many
// of its pods exist, all ready.
func scaleCoreDNS(t *testing.T, c *cluster.Cluster, replicas int) {
	t.Helper()
	kubectl(t, c, nil, "-n", "kube-system", "scale", "deployment/coredns", fmt.Sprintf("--replicas=%d", replicas))
	waitCoreDNS(t, c, replicas)
}

func waitCoreDNS(t *testing.T, c *cluster.Cluster, replicas int) {
	t.Helper()
	polltest.Every(t, 3*time.Minute, apiPoll, fmt.Sprintf("%d CoreDNS pods ready", replicas), func() error {
		pods, err := c.Client.CoreV1().Pods("kube-system").List(t.Context(), metav1.ListOptions{LabelSelector: "app=coredns"})
		if err != nil {
			return err
		}
		ready := 0
		for i := range pods.Items {
			if podReady(&pods.Items[i]) {
				ready++
			}
		}
		if len(pods.Items) != replicas || ready != replicas {
			return fmt.Errorf("%d pods, %d ready", len(pods.Items), ready)
		}
		return nil
	})
}

// scriptedQuestions are the questions askAll asks besides migrateQuestions:
// the asking pod's own name, a pod name no pod has, and a search-path name.
const scriptedQuestions = 3

// askAll asks every migrateQuestion from the glibc pod with dig, through
// the kube-dns Service, and returns each answer as "rcode; records",
// records sorted, without their TTLs (the servers' caches age them apart).
func askAll(t *testing.T, c *cluster.Cluster) map[string]string {
	t.Helper()
	var script strings.Builder
	for _, q := range migrateQuestions {
		fmt.Fprintf(&script, "echo '== %s %s'; dig +tries=2 +time=2 +noall +comments +answer %s %s;", q[0], q[1], q[0], q[1])
	}
	// The asking pod's own name and one no pod has: verified pod names need kube2sky's pod records.
	script.WriteString("p=$(hostname -i | awk '{print $1}' | tr . -); echo '== own pod name A'; dig +tries=2 +time=2 +noall +comments +answer $p.default.pod.cluster.local A;")
	script.WriteString("echo '== 1-2-3-4.default.pod.cluster.local A'; dig +tries=2 +time=2 +noall +comments +answer 1-2-3-4.default.pod.cluster.local A;")
	script.WriteString("echo '== search web'; getent hosts web")
	return parseAnswers(execIn(t, c, "glibc", "sh", "-c", script.String()))
}

// parseAnswers turns askAll's output into one answer per question.
func parseAnswers(out string) map[string]string {
	answers := map[string]string{}
	var question, rcode string
	var records []string
	flush := func() {
		if question != "" {
			slices.Sort(records)
			answers[question] = rcode + "; " + strings.Join(records, " | ")
		}
	}
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "== "):
			flush()
			question, rcode, records = strings.TrimPrefix(line, "== "), "", nil
		case strings.Contains(line, "status: "):
			rcode = strings.TrimSuffix(strings.Fields(strings.SplitN(line, "status: ", 2)[1])[0], ",")
		case strings.HasPrefix(line, ";") || strings.TrimSpace(line) == "":
		default:
			f := strings.Fields(strings.ToLower(line))
			if len(f) >= 5 && f[2] == "in" { // name ttl class type rdata: the TTL left out
				f = append(f[:1], f[2:]...)
			}
			records = append(records, strings.Join(f, " "))
		}
	}
	flush()
	return answers
}

// compareAnswers fails t for each question answered otherwise than before.
func compareAnswers(t *testing.T, before, after map[string]string) {
	t.Helper()
	if len(before) != len(migrateQuestions)+scriptedQuestions {
		t.Fatalf("%d answers recorded from CoreDNS, want %d:\n%v", len(before), len(migrateQuestions)+scriptedQuestions, before)
	}
	for q, want := range before {
		if want == "; " { // no rcode (dig) and no record (dig or getent)
			t.Fatalf("%s: CoreDNS gave no answer to compare with", q)
		}
		if got := after[q]; got != want {
			t.Errorf("%s: %q, CoreDNS answered %q", q, got, want)
		}
	}
}
