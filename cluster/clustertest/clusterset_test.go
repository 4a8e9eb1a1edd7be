package clustertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
	mcsclient "sigs.k8s.io/mcs-api/pkg/client/clientset/versioned"

	"github.com/kubesky/kubesky/cluster"
	"github.com/kubesky/kubesky/internal/polltest"
	kcs "github.com/kubesky/kubesky/kube2sky/clusterset"
)

// The clusterset test's figures: the target for an export seen by
// every cluster (printed beside the measure, not asserted: a figure, not a
// pass mark), and the limit for a lost cluster's endpoints to leave (the
// lease TTL, 12 s, and a margin: past it the lease did not work).
const (
	exportSeenTarget = time.Second
	lostClusterLimit = 15 * time.Second
	clustersetPoll   = 50 * time.Millisecond
	exportsTimed     = 10
)

// member is one cluster of the clusterset with its MCS client.
type member struct {
	*cluster.Cluster
	id  string
	mcs mcsclient.Interface
}

// TestClusterset runs two real clusters, east and west, whose pod ranges
// are routed to each other and whose kubesky share one broker etcd, and
// checks the Multi-Cluster Services cases of the KEP and the MCS DNS
// specification through their nodes, kube-proxy and pods.
func TestClusterset(t *testing.T) {
	east, west, set := startClusterset(t)
	for _, m := range []member{east, west} {
		kubectl(t, m.Cluster, nil, "create", "namespace", "demo")
	}
	t.Run("dns-version", func(t *testing.T) {
		for _, m := range []member{east, west} {
			answerWithin(t, m, "dns-version.clusterset.local.", dns.TypeTXT, "1.0.0")
		}
	})
	t.Run("the broker's users write only their own keys", func(t *testing.T) { brokerRefusesOthersKeys(t, set) })
	kubectl(t, west.Cluster, []byte(webYAML), "apply", "-f", "-")
	kubectl(t, west.Cluster, []byte(dbYAML), "apply", "-f", "-")
	kubectl(t, east.Cluster, []byte(dbYAML), "apply", "-f", "-")
	kubectl(t, east.Cluster, []byte(clientYAML), "apply", "-f", "-")
	for _, m := range []member{east, west} {
		waitDemoReady(t, m)
	}
	waitPodsReady(t, east.Cluster, "client")
	export(t, west, "web")
	var webIP string
	t.Run("a Service of west reached from a pod of east by name and by clusterset IP", func(t *testing.T) {
		webIP = importedIPWithin(t, east, "web", []string{"west"})
		mcsSlicesWithin(t, east, "web", []string{"west"})
		answerWithin(t, east, "web.demo.svc.clusterset.local.", dns.TypeA, webIP)
		answerWithin(t, east, "_http._tcp.web.demo.svc.clusterset.local.", dns.TypeSRV, "80 web.demo.svc.clusterset.local.")
		westPod := demoPod(t, west, "app=web")
		for _, target := range []string{"web.demo.svc.clusterset.local.", webIP} {
			if got := hostnameWithin(t, east, target); got != westPod {
				t.Errorf("east's pod asked http://%s/hostname: got %q, want west's pod %s", target, got, westPod)
			}
		}
	})
	t.Run("a Service exported from both clusters answers with both clusters' endpoints", func(t *testing.T) {
		export(t, east, "db")
		export(t, west, "db")
		eastIP, westIP := podIPIn(t, east, "db-0"), podIPIn(t, west, "db-0")
		answerWithin(t, east, "db.demo.svc.clusterset.local.", dns.TypeA, eastIP, westIP)
		answerWithin(t, west, "db.demo.svc.clusterset.local.", dns.TypeA, eastIP, westIP)
		answerWithin(t, east, "db-0.west.db.demo.svc.clusterset.local.", dns.TypeA, westIP)
		answerWithin(t, west, "db-0.east.db.demo.svc.clusterset.local.", dns.TypeA, eastIP)
		rcodeWithin(t, east, "west.db.demo.svc.clusterset.local.", dns.TypeA, dns.RcodeNameError)
		kubectl(t, east.Cluster, []byte(webYAML), "apply", "-f", "-")
		waitDemoReady(t, east)
		export(t, east, "web")
		importedIPWithin(t, east, "web", []string{"east", "west"})
		mcsSlicesWithin(t, east, "web", []string{"east", "west"})
		reachesEveryCluster(t, east, "web.demo.svc.clusterset.local.", map[string]string{
			demoPod(t, east, "app=web"): "east", demoPod(t, west, "app=web"): "west"})
	})
	t.Run("an ExternalName Service is not exported, a headless one without endpoints is NXDOMAIN", func(t *testing.T) {
		kubectl(t, west.Cluster, nil, "-n", "demo", "create", "service", "externalname", "ext", "--external-name=example.org")
		export(t, west, "ext")
		exportConditionWithin(t, west, "ext", mcsv1beta1.ServiceExportConditionValid, metav1.ConditionFalse, "InvalidServiceType")
		kubectl(t, west.Cluster, nil, "-n", "demo", "create", "service", "clusterip", "idle", "--clusterip=None")
		export(t, west, "idle")
		importedIPWithin(t, east, "idle", []string{"west"})
		rcodeWithin(t, east, "idle.demo.svc.clusterset.local.", dns.TypeA, dns.RcodeNameError)
	})
	t.Run("ports union, a type conflict on every export, an import gone with the last export", func(t *testing.T) { portsAndConflicts(t, east, west) })
	t.Run("west cut off from the broker leaves the answers within the lease, and comes back", func(t *testing.T) {
		eastIP, westIP := podIPIn(t, east, "db-0"), podIPIn(t, west, "db-0")
		cut := cutFromBroker(t, west, set)
		gone := answerWithin(t, east, "db.demo.svc.clusterset.local.", dns.TypeA, eastIP)
		t.Logf("west cut off from the broker: its endpoint left east's answers after %s (limit %s)", gone.Sub(cut).Round(100*time.Millisecond), lostClusterLimit)
		if gone.Sub(cut) > lostClusterLimit {
			t.Errorf("west's endpoints left after %s, limit %s", gone.Sub(cut), lostClusterLimit)
		}
		importedIPWithin(t, east, "db", []string{"east"})
		rejoined := rejoinBroker(t, west, set)
		back := answerWithin(t, east, "db.demo.svc.clusterset.local.", dns.TypeA, eastIP, westIP)
		t.Logf("west rejoined: its endpoint back in east's answers after %s", back.Sub(rejoined).Round(100*time.Millisecond))
	})
	t.Run("export created and withdrawn: every cluster's answers", func(t *testing.T) { timeExports(t, east, west) })
}

// portsAndConflicts exports Services of one name from both clusters: with
// different ports (the union is imported, no conflict), then of different
// types (the oldest export's type wins; both exports say TypeConflict);
// each import leaves every cluster with the last export.
func portsAndConflicts(t *testing.T, east, west member) {
	kubectl(t, west.Cluster, nil, "-n", "demo", "create", "service", "clusterip", "api", "--tcp=80:8080")
	kubectl(t, east.Cluster, nil, "-n", "demo", "create", "service", "clusterip", "api", "--tcp=80:8080", "--tcp=9000:9000")
	export(t, west, "api")
	export(t, east, "api")
	for _, m := range []member{east, west} {
		importedIPWithin(t, m, "api", []string{"east", "west"})
		importPortsWithin(t, m, "api", []string{"80-8080/TCP/80", "9000-9000/TCP/9000"})
		exportConditionWithin(t, m, "api", mcsv1beta1.ServiceExportConditionConflict, metav1.ConditionFalse, string(mcsv1beta1.ServiceExportReasonNoConflicts))
	}
	kubectl(t, west.Cluster, nil, "-n", "demo", "create", "service", "clusterip", "mixed", "--tcp=80:8080")
	kubectl(t, east.Cluster, nil, "-n", "demo", "create", "service", "clusterip", "mixed", "--clusterip=None")
	export(t, west, "mixed")
	importedIPWithin(t, east, "mixed", []string{"west"})
	laterSecond(t, west, "mixed")
	export(t, east, "mixed")
	for _, m := range []member{east, west} {
		exportConditionWithin(t, m, "mixed", mcsv1beta1.ServiceExportConditionConflict, metav1.ConditionTrue, string(mcsv1beta1.ServiceExportReasonTypeConflict))
		si, err := m.mcs.MulticlusterV1beta1().ServiceImports("demo").Get(t.Context(), "mixed", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s: ServiceImport mixed: %v", m.id, err)
		}
		if si.Spec.Type != mcsv1beta1.ClusterSetIP {
			t.Errorf("%s: ServiceImport mixed is %s, want the oldest export's type %s", m.id, si.Spec.Type, mcsv1beta1.ClusterSetIP)
		}
	}
	for _, name := range []string{"api", "mixed"} {
		for _, m := range []member{east, west} {
			if err := m.mcs.MulticlusterV1beta1().ServiceExports("demo").Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		for _, m := range []member{east, west} {
			noImportWithin(t, m, name)
		}
	}
}

// laterSecond waits until the clock is past the second m's ServiceExport
// demo/name was created in: creation times have a resolution of one
// second, and two exports created in the same one tie (the cluster ID
// decides), which would make the older export not the oldest.
func laterSecond(t *testing.T, m member, name string) {
	t.Helper()
	se, err := m.mcs.MulticlusterV1beta1().ServiceExports("demo").Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	next := se.CreationTimestamp.Add(time.Second)
	polltest.Every(t, 5*time.Second, clustersetPoll, "a second after "+m.id+"'s export "+name, func() error {
		if time.Now().Before(next) {
			return fmt.Errorf("not yet %s", next)
		}
		return nil
	})
}

// importPortsWithin waits until m's ServiceImport demo/name has exactly the
// ports, each "name/protocol/port".
func importPortsWithin(t *testing.T, m member, name string, want []string) {
	t.Helper()
	polltest.Every(t, time.Minute, apiPoll, fmt.Sprintf("%s: ServiceImport %s ports %v", m.id, name, want), func() error {
		si, err := m.mcs.MulticlusterV1beta1().ServiceImports("demo").Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		var got []string
		for _, p := range si.Spec.Ports {
			got = append(got, fmt.Sprintf("%s/%s/%d", p.Name, p.Protocol, p.Port))
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			return fmt.Errorf("ports %v", got)
		}
		return nil
	})
}

// noImportWithin waits until m has no ServiceImport demo/name.
func noImportWithin(t *testing.T, m member, name string) {
	t.Helper()
	polltest.Every(t, time.Minute, apiPoll, fmt.Sprintf("%s: no ServiceImport %s", m.id, name), func() error {
		_, err := m.mcs.MulticlusterV1beta1().ServiceImports("demo").Get(t.Context(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there (%v)", err)
	})
}

// startClusterset starts the clusterset for the test (KUBESKY_CLUSTER_NODES
// nodes each) and stops it at the end, then checks the host is as it was.
func startClusterset(t *testing.T) (east, west member, set *cluster.Clusterset) {
	t.Helper()
	cfg := testConfig(t)
	before := readHostState(t)
	t.Cleanup(func() { checkHostUnchanged(t, before) })
	set, err := cluster.StartClusterset(t.Context(), cfg, cluster.ClustersetIDs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			logKubeskyTails(t, set)
		}
		set.Stop()
	})
	members := make([]member, len(set.Members))
	for i, c := range set.Members {
		mcs, err := mcsclient.NewForConfig(c.Config)
		if err != nil {
			t.Fatal(err)
		}
		members[i] = member{Cluster: c, id: c.Cfg().ClusterID, mcs: mcs}
	}
	return members[0], members[1], set
}

// logKubeskyTails logs the end of every kubesky container's log.
func logKubeskyTails(t *testing.T, set *cluster.Clusterset) {
	for _, c := range set.Members {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		for _, container := range []string{"kube2sky", "skydns"} {
			out, _ := c.Cfg().Kubectl(ctx, "-n", "kube-system", "logs", "-l", "app.kubernetes.io/name=kubesky", "-c", container, "--tail=30", "--prefix").CombinedOutput()
			t.Logf("--- %s: %s:\n%s", c.Cfg().ClusterID, container, out)
		}
		cancel()
	}
}

// The workloads: web (agnhost serving its pod name on /hostname behind
// port 80), db (a StatefulSet behind a headless Service, so its endpoint
// has a hostname) and a client in east (agnhost netexec, whose /dial
// fetches a URL from inside the pod).
var (
	webYAML = netexecYAML("Deployment", "web", "http", 8080, 80)
	dbYAML  = netexecYAML("StatefulSet", "db", "sql", 5432, 5432)
)

// netexecYAML is one agnhost netexec pod in demo, serving HTTP on port
// (named portName), and its Service name on servicePort: a Deployment
// behind a ClusterIP Service, or a StatefulSet behind a headless one.
func netexecYAML(kind, name, portName string, port, servicePort int) string {
	workload, service := "", ""
	if kind == "StatefulSet" {
		workload, service = "serviceName: "+name, "clusterIP: None"
	}
	return fmt.Sprintf(`
apiVersion: apps/v1
kind: %[1]s
metadata: {name: %[2]s, namespace: demo}
spec:
  %[6]s
  replicas: 1
  selector: {matchLabels: {app: %[2]s}}
  template:
    metadata: {labels: {app: %[2]s}}
    spec:
      containers:
        - name: %[2]s
          image: %[8]s
          imagePullPolicy: Never
          args: [netexec, --http-port=%[4]d]
          ports: [{name: %[3]s, containerPort: %[4]d}]
          readinessProbe: {httpGet: {path: /hostname, port: %[4]d}, periodSeconds: 1}
---
apiVersion: v1
kind: Service
metadata: {name: %[2]s, namespace: demo}
spec:
  %[7]s
  selector: {app: %[2]s}
  ports: [{name: %[3]s, port: %[5]d, targetPort: %[3]s}]
`, kind, name, portName, port, servicePort, workload, service, cluster.AgnhostImage)
}

const clientYAML = `
apiVersion: v1
kind: Pod
metadata: {name: client, namespace: default}
spec:
  containers:
    - name: client
      image: ` + cluster.AgnhostImage + `
      imagePullPolicy: Never
      args: [netexec, --http-port=8080]
      readinessProbe: {httpGet: {path: /hostname, port: 8080}, periodSeconds: 1}
`

// waitDemoReady waits until every pod in namespace demo is Ready.
func waitDemoReady(t *testing.T, m member) {
	t.Helper()
	polltest.Every(t, 2*time.Minute, apiPoll, m.id+": pods in demo ready", func() error {
		pods, err := m.Client.CoreV1().Pods("demo").List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, pod := range pods.Items {
			if !podReady(&pod) {
				return fmt.Errorf("pod %s: %s, not Ready", pod.Name, pod.Status.Phase)
			}
		}
		return nil
	})
}

// demoPod is the name of the one pod in demo that selector selects.
func demoPod(t *testing.T, m member, selector string) string {
	t.Helper()
	pods, err := m.Client.CoreV1().Pods("demo").List(t.Context(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatalf("%s: pods %s in demo: %v", m.id, selector, err)
	}
	if len(pods.Items) != 1 {
		t.Fatalf("%s: pods %s in demo: %v, want one", m.id, selector, podNames(pods.Items))
	}
	return pods.Items[0].Name
}

func podIPIn(t *testing.T, m member, name string) string {
	t.Helper()
	pod, err := m.Client.CoreV1().Pods("demo").Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("%s: pod demo/%s: %v", m.id, name, err)
	}
	if pod.Status.PodIP == "" {
		t.Fatalf("%s: pod demo/%s has no IP", m.id, name)
	}
	return pod.Status.PodIP
}

// export creates the ServiceExport of demo/name.
func export(t *testing.T, m member, name string) {
	t.Helper()
	se := &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name}}
	if _, err := m.mcs.MulticlusterV1beta1().ServiceExports("demo").Create(t.Context(), se, metav1.CreateOptions{}); err != nil {
		t.Fatalf("%s: ServiceExport demo/%s: %v", m.id, name, err)
	}
}

// importedIPWithin waits until m has the ServiceImport demo/name from
// exactly the clusters, with one IP, and returns it.
func importedIPWithin(t *testing.T, m member, name string, clusters []string) string {
	t.Helper()
	var ip string
	polltest.Every(t, time.Minute, apiPoll, fmt.Sprintf("%s: ServiceImport demo/%s from %v", m.id, name, clusters), func() error {
		si, err := m.mcs.MulticlusterV1beta1().ServiceImports("demo").Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		var from []string
		for _, c := range si.Status.Clusters {
			from = append(from, c.Cluster)
		}
		slices.Sort(from)
		if !slices.Equal(from, clusters) {
			return fmt.Errorf("from %v", from)
		}
		if si.Spec.Type == mcsv1beta1.ClusterSetIP && len(si.Spec.IPs) != 1 {
			return fmt.Errorf("ips %v", si.Spec.IPs)
		}
		if len(si.Spec.IPs) > 0 {
			ip = si.Spec.IPs[0]
		}
		return nil
	})
	return ip
}

func exportConditionWithin(t *testing.T, m member, name string, ct mcsv1beta1.ServiceExportConditionType, status metav1.ConditionStatus, reason string) {
	t.Helper()
	polltest.Every(t, time.Minute, apiPoll, fmt.Sprintf("%s: ServiceExport %s %s=%s (%s)", m.id, name, ct, status, reason), func() error {
		se, err := m.mcs.MulticlusterV1beta1().ServiceExports("demo").Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range se.Status.Conditions {
			if c.Type == string(ct) && c.Status == status && c.Reason == reason {
				return nil
			}
		}
		return fmt.Errorf("conditions %v", se.Status.Conditions)
	})
}

// ask sends one question to m's kube-dns Service from its first node.
func ask(ctx context.Context, m member, name string, qtype uint16) (*dns.Msg, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return m.Exchange(ctx, cluster.DNSPort(m.Cfg().Addresses().ClusterDNS), name, qtype)
}

// replyWithin polls until m's reply to name passes check, and returns it.
func replyWithin(t *testing.T, m member, name string, qtype uint16, what string, check func(*dns.Msg) error) *dns.Msg {
	t.Helper()
	var reply *dns.Msg
	polltest.Every(t, time.Minute, clustersetPoll, fmt.Sprintf("%s answers %s %s %s", m.id, name, dns.TypeToString[qtype], what), func() error {
		var err error
		if reply, err = ask(t.Context(), m, name, qtype); err != nil {
			return err
		}
		return check(reply)
	})
	return reply
}

// answerWithin polls until m answers name with exactly want (A addresses,
// TXT text, or SRV "port target"), and returns when it did.
func answerWithin(t *testing.T, m member, name string, qtype uint16, want ...string) time.Time {
	t.Helper()
	slices.Sort(want)
	replyWithin(t, m, name, qtype, fmt.Sprint(want), func(reply *dns.Msg) error {
		if got := rdata(reply); !slices.Equal(got, want) {
			return fmt.Errorf("%s: %v", dns.RcodeToString[reply.Rcode], got)
		}
		return nil
	})
	return time.Now()
}

// addressWithin polls until m answers name with one address, and returns
// it.
func addressWithin(t *testing.T, m member, name string) string {
	t.Helper()
	reply := replyWithin(t, m, name, dns.TypeA, "with an address", func(reply *dns.Msg) error {
		if got := rdata(reply); len(got) != 1 {
			return fmt.Errorf("%s: %v", dns.RcodeToString[reply.Rcode], got)
		}
		return nil
	})
	return rdata(reply)[0]
}

func rcodeWithin(t *testing.T, m member, name string, qtype uint16, rcode int) {
	t.Helper()
	replyWithin(t, m, name, qtype, dns.RcodeToString[rcode], func(reply *dns.Msg) error {
		if reply.Rcode != rcode {
			return fmt.Errorf("%s %v", dns.RcodeToString[reply.Rcode], rdata(reply))
		}
		return nil
	})
}

// rdata is the answer's data, sorted: addresses, TXT strings, SRV port and
// target.
func rdata(reply *dns.Msg) []string {
	var out []string
	for _, rr := range reply.Answer {
		switch rr := rr.(type) {
		case *dns.A:
			out = append(out, rr.A.String())
		case *dns.TXT:
			out = append(out, strings.Join(rr.Txt, ""))
		case *dns.SRV:
			out = append(out, fmt.Sprintf("%d %s", rr.Port, rr.Target))
		}
	}
	slices.Sort(out)
	return out
}

// noAnswer begins what fetchHostname returns when target did not answer.
const noAnswer = "no answer"

// fetchHostname has m's client pod (agnhost netexec) fetch
// http://target/hostname, resolving target with its own resolver, and
// returns the answer.
func fetchHostname(t *testing.T, m member, target string) string {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: cluster.DialInNetNS(m.Cfg().ClientNetNS())}}
	q := url.Values{"request": {"hostname"}, "host": {target}, "port": {"80"}, "protocol": {"http"}, "tries": {"1"}}
	dial := "http://" + net.JoinHostPort(podIP(t, m.Cluster, "client"), "8080") + "/dial?" + q.Encode()
	resp, err := client.Get(dial)
	if err != nil {
		t.Fatalf("%s: %v", m.id, err)
	}
	defer resp.Body.Close()
	var result struct{ Responses, Errors []string }
	if err := json.NewDecoder(resp.Body).Decode(&result); err != nil {
		t.Fatalf("%s: %s: %v", m.id, dial, err)
	}
	if len(result.Responses) != 1 {
		return fmt.Sprintf("%s: %v", noAnswer, result.Errors)
	}
	return result.Responses[0]
}

// hostnameWithin polls fetchHostname until target answers (kube-proxy
// programs a new Service's endpoints within a second or so), and returns
// the answer.
func hostnameWithin(t *testing.T, m member, target string) string {
	t.Helper()
	var got string
	polltest.Every(t, 30*time.Second, apiPoll, fmt.Sprintf("%s's pod fetches http://%s/hostname", m.id, target), func() error {
		if got = fetchHostname(t, m, target); strings.HasPrefix(got, noAnswer) {
			return errors.New(got)
		}
		return nil
	})
	return got
}

// reachesEveryCluster fetches /hostname from target until every pod of
// pods (pod name to its cluster) has answered, within 30 s: kube-proxy
// picks one endpoint at random, so each is reached within a few tries once
// it has them all. An answer from any other pod fails the test.
func reachesEveryCluster(t *testing.T, m member, target string, pods map[string]string) {
	t.Helper()
	seen := map[string]int{}
	polltest.Every(t, 30*time.Second, clustersetPoll, fmt.Sprintf("%s's pod reaches each of %v through %s", m.id, pods, target), func() error {
		got := fetchHostname(t, m, target)
		if _, ok := pods[got]; !ok {
			t.Fatalf("%s's pod asked http://%s/hostname: got %q, want one of %v", m.id, target, got, pods)
		}
		seen[got]++
		if len(seen) < len(pods) {
			return fmt.Errorf("answered by %v", seen)
		}
		return nil
	})
	t.Logf("%s through %s: answers per pod %v", m.id, target, seen)
}

// mcsSlicesWithin waits until m has an MCS EndpointSlice of demo/service
// with a ready endpoint from each of the clusters, and no other cluster.
func mcsSlicesWithin(t *testing.T, m member, service string, clusters []string) {
	t.Helper()
	selector := mcsv1beta1.LabelServiceName + "=" + service
	polltest.Every(t, time.Minute, apiPoll, fmt.Sprintf("%s: MCS EndpointSlices of %s from %v", m.id, service, clusters), func() error {
		list, err := m.Client.DiscoveryV1().EndpointSlices("demo").List(t.Context(), metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return err
		}
		var from []string
		for _, s := range list.Items {
			if len(s.Endpoints) > 0 {
				from = append(from, s.Labels[mcsv1beta1.LabelSourceCluster])
			}
		}
		slices.Sort(from)
		from = slices.Compact(from)
		if !slices.Equal(from, clusters) {
			return fmt.Errorf("slices with endpoints from %v", from)
		}
		return nil
	})
}

// brokerRefusesOthersKeys tries, with west's kube2sky credential and with
// the readers', what they must not do on the broker.
func brokerRefusesOthersKeys(t *testing.T, set *cluster.Clusterset) {
	for user, keys := range map[string][]string{
		kcs.ClusterUser("west"): {"/clusterset/clusters/east", "/clusterset/exports/east/demo/web", "/clusterset/imports/east/demo/web", "/skydns/local/cluster/svc/x"},
		kcs.ReaderUser:          {"/clusterset/clusters/west", "/clusterset/exports/west/demo/web"},
	} {
		cli, err := set.Client(user)
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range keys {
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			if _, err := cli.Put(ctx, key, "{}"); err == nil || !strings.Contains(err.Error(), "permission denied") {
				t.Errorf("%s put %s: %v, want permission denied", user, key, err)
			}
			if _, err := cli.Delete(ctx, key); err == nil || !strings.Contains(err.Error(), "permission denied") {
				t.Errorf("%s delete %s: %v, want permission denied", user, key, err)
			}
			cancel()
		}
		cli.Close()
	}
}

// cutFromBroker drops what m's namespaces forward to the broker (its
// control plane forwards every packet of its nodes and pods to the other
// cluster) and returns when.
func cutFromBroker(t *testing.T, m member, set *cluster.Clusterset) time.Time {
	t.Helper()
	brokerRule(t, m, set, "-I")
	t.Cleanup(func() { _ = exec.Command("ip", brokerRuleArgs(t, m, set, "-D")...).Run() })
	return time.Now()
}

func rejoinBroker(t *testing.T, m member, set *cluster.Clusterset) time.Time {
	t.Helper()
	brokerRule(t, m, set, "-D")
	return time.Now()
}

func brokerRule(t *testing.T, m member, set *cluster.Clusterset, op string) {
	t.Helper()
	if out, err := exec.Command("ip", brokerRuleArgs(t, m, set, op)...).CombinedOutput(); err != nil {
		t.Fatalf("iptables %s in %s: %v: %s", op, m.Cfg().NetNS, err, out)
	}
}

// brokerRuleArgs are the `ip netns exec` arguments of the iptables rule
// (op -I adds, -D removes) dropping what m forwards to the broker.
func brokerRuleArgs(t *testing.T, m member, set *cluster.Clusterset, op string) []string {
	u, err := url.Parse(set.Broker)
	if err != nil {
		t.Fatal(err)
	}
	return []string{"netns", "exec", m.Cfg().NetNS, "iptables", op, "FORWARD", "-p", "tcp", "-d", u.Hostname(), "--dport", u.Port(), "-j", "DROP"}
}

// timeExports exports Services of west one at a time and measures how long
// each takes to be answered by every cluster (each its own clusterset IP),
// then how long its withdrawal takes to be NXDOMAIN everywhere.
func timeExports(t *testing.T, east, west member) {
	var seen, gone []time.Duration
	for i := range exportsTimed {
		name := fmt.Sprintf("timed-%d", i)
		kubectl(t, west.Cluster, nil, "-n", "demo", "create", "service", "clusterip", name, "--tcp=80:8080")
		start := time.Now()
		export(t, west, name)
		fqdn := name + ".demo.svc.clusterset.local."
		answered := map[string]string{}
		for _, m := range []member{east, west} {
			answered[m.id] = addressWithin(t, m, fqdn)
		}
		seen = append(seen, time.Since(start))
		for _, m := range []member{east, west} {
			if ip := importedIPWithin(t, m, name, []string{"west"}); ip != answered[m.id] {
				t.Errorf("%s answered %s with %s, its ServiceImport's IP is %s", m.id, fqdn, answered[m.id], ip)
			}
		}
		start = time.Now()
		if err := west.mcs.MulticlusterV1beta1().ServiceExports("demo").Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, m := range []member{east, west} {
			rcodeWithin(t, m, fqdn, dns.TypeA, dns.RcodeNameError)
		}
		gone = append(gone, time.Since(start))
		for _, m := range []member{east, west} {
			noImportWithin(t, m, name)
		}
	}
	slices.Sort(seen)
	slices.Sort(gone)
	t.Logf("ServiceExport created → every cluster answers (%d exports): p50 %s, p99 %s (target %s); withdrawn → NXDOMAIN everywhere: p50 %s, p99 %s",
		exportsTimed, pct(seen, 50), pct(seen, 99), exportSeenTarget, pct(gone, 50), pct(gone, 99))
}
