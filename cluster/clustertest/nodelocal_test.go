package clustertest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesky/kubesky/cluster"
	"github.com/kubesky/kubesky/deploy"
	"github.com/kubesky/kubesky/internal/polltest"
)

// The node-local topology's names (deploy/node-local).
const (
	nodeLocalSet = "kubesky-node-local"
	// nodeLocalRate and nodeLocalLookups are the glibc client's pace under
	// a disruption: 50 lookups a second, for 40 seconds.
	nodeLocalRate    = 50
	nodeLocalLookups = 2000
)

// nodeLocalContainers are the skydns of each node-local pod, by the port
// of their metrics (which tells their processes apart on a node).
var nodeLocalContainers = map[string]string{"skydns": "9253"}

// nodeLocalHolder is the node-local pod's container running skydns-holder.
const nodeLocalHolder = "holder"

// TestNodeLocal deploys deploy/node-local and checks that every pod is
// answered by its own node's skydns without a conntrack entry, and that a
// DaemonSet rolling update, a kill -9 of a node's skydns (what an OOM kill
// does) and one of its holder fail no lookup and slow none past 1 s, for
// glibc's resolver resolving 50 times a second on that node; nor does
// replacing the etcd CAs and every key, three rolling restarts of all of
// kubesky.
func TestNodeLocal(t *testing.T) {
	c := startCluster(t, cluster.TopologyNodeLocal)
	conformanceFirst(t, c)
	tools := buildLookups(t, c)
	createService(t, c, "web")
	polltest.Every(t, time.Minute, apiPoll, "web resolving", func() error { return resolves(t, c, "web.default.svc.cluster.local.") })

	t.Run("every node runs a ready node-local pod", func(t *testing.T) {
		ds, err := c.Client.AppsV1().DaemonSets("kube-system").Get(t.Context(), nodeLocalSet, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if n := int32(c.Cfg().Nodes); ds.Status.NumberReady != n {
			t.Fatalf("%d node-local pods ready, want %d", ds.Status.NumberReady, n)
		}
	})
	t.Run("pods ask their node first and the kube-dns Service second", func(t *testing.T) {
		out := runLookups(t, c, tools, "resolvconf", c.Cfg().Node(1).Name, "cat /etc/resolv.conf")
		a := c.Cfg().Addresses()
		if !regexp.MustCompile(`nameserver ` + regexp.QuoteMeta(a.NodeLocalDNS) + `\nnameserver ` + regexp.QuoteMeta(a.ClusterDNS) + `\n`).MatchString(out) {
			t.Errorf("resolv.conf:\n%s", out)
		}
	})
	t.Run("each node answers its pods itself, making no conntrack entry", func(t *testing.T) {
		for _, n := range c.Cfg().AllNodes() {
			checkAnsweredOnNode(t, c, tools, n)
		}
	})
	node := c.Cfg().Node(min(2, c.Cfg().Nodes))
	t.Run("security: every reader credential only reads, on every path, under lookups that all answer", func(t *testing.T) {
		lookupsOnNode(t, c, tools, "security", node.Name, func() { checkSecurity(t, c, "skydns", "node-local") })
		checkNodeHoldsOnlyItsKey(t, c)
	})
	t.Run("a rolling update fails no lookup and slows none", func(t *testing.T) {
		lookupsOnNode(t, c, tools, "rollout", node.Name, func() { rolloutNodeLocal(t, c) })
	})
	t.Run("kill -9 of the skydns of a node, then of its holder, fails no lookup and slows none", func(t *testing.T) {
		lookupsOnNode(t, c, tools, "kill", node.Name, func() {
			killNodeLocal(t, c, node)
			killHolder(t, c, node)
		})
	})
	t.Run("replacing both etcd CAs and every key fails no lookup, and then no key of the old CAs opens anything", func(t *testing.T) {
		old := etcdSecrets(t, c)
		lookupsOnNodeWhile(t, c, tools, "rotation", node.Name, func() { replaceEtcdCAs(t, c, old) })
		checkKube2skyWrites(t, c, "rotated")
		checkOldKeysRefused(t, c, old)
	})
}

// lookupsOnNodeWhile is lookupsOnNode for as long as disrupt takes (at
// most 10 minutes): the lookups stop once it has returned.
func lookupsOnNodeWhile(t *testing.T, c *cluster.Cluster, tools, name, node string, disrupt func()) {
	t.Helper()
	stop := filepath.Join(tools, "stop-"+name)
	if err := os.Remove(stop); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	script := fmt.Sprintf("echo started; export LOOKUPS_STOP_FILE=/tools/stop-%s; exec /tools/lookups web.default.svc.cluster.local %d %d",
		name, nodeLocalRate, nodeLocalRate*600)
	s := measuredLookups(t, c, tools, name, node, script, func() {
		disrupt()
		if err := os.WriteFile(stop, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	})
	if s.Failed != 0 || s.Slow != 0 {
		t.Errorf("%d failed and %d over 1 s, want none:\n%s", s.Failed, s.Slow, s.problems)
	}
}

// replaceEtcdCAs takes the three steps of replacing the shared etcd's
// CAs, each followed by a rolling restart of every pod that mounts their
// Secrets (docs/operations.md). After the first, every ca.crt holds the
// old CA and then the new; after the last, the new alone, and every key
// and certificate differs from old's.
func replaceEtcdCAs(t *testing.T, c *cluster.Cluster, old map[string]*corev1.Secret) {
	t.Helper()
	start := time.Now()
	for _, step := range []cluster.CAStep{cluster.TrustNewCAs, cluster.IssueUnderNewCAs, cluster.DropOldCAs} {
		if err := c.ReplaceEtcdCAs(t.Context(), step); err != nil {
			t.Fatal(err)
		}
		if step == cluster.TrustNewCAs {
			checkCAs(t, old, etcdSecrets(t, c), 2)
		}
		rollEtcdClients(t, c)
	}
	checkCAs(t, old, etcdSecrets(t, c), 1)
	for name, secret := range etcdSecrets(t, c) {
		for key, data := range old[name].Data {
			if bytes.Equal(secret.Data[key], data) {
				t.Errorf("%s's %s is the old one", name, key)
			}
		}
	}
	t.Logf("CAs replaced in three rollouts in %s", time.Since(start).Round(100*time.Millisecond))
}

// checkCAs checks that every CA file of the Secrets holds n certificates,
// the first the old one's if n is 2.
func checkCAs(t *testing.T, old, secrets map[string]*corev1.Secret, n int) {
	t.Helper()
	for name, secret := range secrets {
		for key, data := range secret.Data {
			if !strings.HasSuffix(key, "ca.crt") {
				continue
			}
			if got := bytes.Count(data, []byte("BEGIN CERTIFICATE")); got != n || (n == 2) != bytes.HasPrefix(data, old[name].Data[key]) {
				t.Errorf("%s's %s holds %d certificates, want %d (the first the old CA if 2)", name, key, got, n)
			}
		}
	}
}

// etcdSecrets are the Secrets of deploy.EtcdSecrets.
func etcdSecrets(t *testing.T, c *cluster.Cluster) map[string]*corev1.Secret {
	t.Helper()
	secrets := map[string]*corev1.Secret{}
	for name := range deploy.EtcdSecrets {
		secrets[name] = etcdSecret(t, c, name)
	}
	return secrets
}

// rollEtcdClients restarts what mounts the etcd Secrets, all at once (at
// each step of replaceEtcdCAs every pod trusts the CA of every
// certificate in use), and waits until each is rolled out.
func rollEtcdClients(t *testing.T, c *cluster.Cluster) {
	t.Helper()
	objs := []string{"statefulset/kubesky-etcd", "deployment/kubesky-kube2sky", "deployment/kubesky-etcd-relay", "deployment/kubesky-skydns", "daemonset/" + nodeLocalSet}
	kubectl(t, c, nil, append([]string{"-n", "kube-system", "rollout", "restart"}, objs...)...)
	for _, obj := range objs {
		waitRolledOut(t, c, obj)
	}
	waitDaemonSet(t, c, nodeLocalSet)
}

// checkOldKeysRefused: once the CAs are replaced, a key of the old ones
// opens nothing: root's and kube2sky's at each member, each reader's at
// each relay pod, where the current key of the same identity is accepted.
// The client trusts the new CAs, so what refuses is the server.
func checkOldKeysRefused(t *testing.T, c *cluster.Cluster, old map[string]*corev1.Secret) {
	var relays []string
	for _, pod := range readyPods(t, c, "etcd-relay") {
		relays = append(relays, net.JoinHostPort(pod.Status.PodIP, "2379"))
	}
	for name, path := range map[string]struct {
		addrs      []string
		serverName string
	}{
		"kubesky-etcd-admin": {etcdMembers, ""}, "kubesky-etcd-kube2sky": {etcdMembers, ""},
		"kubesky-etcd-skydns": {relays, relayService}, "kubesky-etcd-node-local": {relays, relayService},
	} {
		current := etcdSecret(t, c, name)
		stale := old[name].DeepCopy()
		stale.Data["ca.crt"] = current.Data["ca.crt"]
		for _, addr := range path.addrs {
			t.Run("the old "+name+" opens nothing at "+addr, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
				defer cancel()
				if _, err := etcdClientAt(t, c, current, addr, path.serverName).Get(ctx, "/skydns/", clientv3.WithPrefix(), clientv3.WithCountOnly()); err != nil {
					t.Fatalf("the current key does not read either: %v", err)
				}
				checkHandshakeRefused(t, c, stale, addr, path.serverName)
			})
		}
	}
}

// waitRolledOut waits until kubectl rollout status says obj (kind/name in
// kube-system) is rolled out.
func waitRolledOut(t *testing.T, c *cluster.Cluster, obj string) {
	t.Helper()
	polltest.Every(t, 5*time.Minute, apiPoll, obj+" rolled out", func() error {
		ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
		defer cancel()
		out, err := c.Cfg().Kubectl(ctx, "-n", "kube-system", "rollout", "status", obj, "--timeout=30s").CombinedOutput()
		if err != nil {
			return fmt.Errorf("%w: %s", err, out)
		}
		return nil
	})
}

// buildLookups compiles testdata/lookups.c, static, into a directory of
// the cluster's run directory, which pods mount (hostPath) as /tools.
func buildLookups(t *testing.T, c *cluster.Cluster) string {
	t.Helper()
	dir := filepath.Join(c.Cfg().DataDir, "run", "tools")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("gcc", "-static", "-O2", "-pthread", "-o", filepath.Join(dir, "lookups"), "testdata/lookups.c").CombinedOutput()
	if err != nil {
		t.Fatalf("gcc testdata/lookups.c: %v\n%s", err, out)
	}
	return dir
}

// runLookups runs script (sh -c) in a Debian pod named name on node, with
// tools mounted as /tools, and returns its log once the pod has exited.
func runLookups(t *testing.T, c *cluster.Cluster, tools, name, node, script string) string {
	t.Helper()
	startToolPod(t, c, tools, name, node, script)
	var log string
	polltest.Every(t, 5*time.Minute, apiPoll, "pod "+name+" done", func() error {
		pod, err := c.Client.CoreV1().Pods("default").Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
			return fmt.Errorf("pod %s is %s", name, pod.Status.Phase)
		}
		data, err := c.Client.CoreV1().Pods("default").GetLogs(name, &corev1.PodLogOptions{}).DoRaw(t.Context())
		log = string(data)
		return err
	})
	kubectl(t, c, nil, "delete", "pod", name, "--wait=false")
	return log
}

// startToolPod starts a Debian pod named name on node running script, with
// tools mounted as /tools. It requests half a core: a measuring client in
// the BestEffort class gets the least CPU weight there is, and on a busy
// 2-core machine waits for it longer than for any answer.
func startToolPod(t *testing.T, c *cluster.Cluster, tools, name, node, script string) {
	t.Helper()
	pod := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: default}
spec:
  nodeName: %q
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers: [{name: main, image: %s, imagePullPolicy: Never, command: ["sh", "-c", %q], volumeMounts: [{name: tools, mountPath: /tools}], resources: {requests: {cpu: 500m}}}]
  volumes: [{name: tools, hostPath: {path: %q, type: Directory}}]
`, name, node, cluster.DebianImage, script, tools)
	kubectl(t, c, []byte(pod), "apply", "-f", "-")
}

// lookupSummary is the END line of testdata/lookups.c.
type lookupSummary struct {
	Lookups, Failed, Slow int
	P50US, P99US, MaxUS   int
	problems              string // its FAIL and SLOW lines
}

var endLine = regexp.MustCompile(`END lookups=(\d+) failed=(\d+) slow=(\d+) p50_us=(\d+) p99_us=(\d+) max_us=(\d+)`)

// parseLookups reads the summary of a lookups run from its log.
func parseLookups(t *testing.T, log string) lookupSummary {
	t.Helper()
	m := endLine.FindStringSubmatch(log)
	if m == nil {
		t.Fatalf("no END line in the lookups log:\n%s", log)
	}
	n := make([]int, len(m))
	for i := 1; i < len(m); i++ {
		n[i], _ = strconv.Atoi(m[i])
	}
	var problems []string
	for _, line := range strings.Split(log, "\n") {
		if strings.HasPrefix(line, "FAIL") || strings.HasPrefix(line, "SLOW") {
			problems = append(problems, line)
		}
	}
	return lookupSummary{Lookups: n[1], Failed: n[2], Slow: n[3], P50US: n[4], P99US: n[5], MaxUS: n[6], problems: strings.Join(problems, "\n")}
}

func (s lookupSummary) String() string {
	return fmt.Sprintf("%d lookups, %d failed, %d over 1 s; p50 %s, p99 %s, max %s", s.Lookups, s.Failed, s.Slow,
		time.Duration(s.P50US)*time.Microsecond, time.Duration(s.P99US)*time.Microsecond, time.Duration(s.MaxUS)*time.Microsecond)
}

// lookupsOnNode runs nodeLocalLookups glibc lookups of web at
// nodeLocalRate a second from a pod on node, calls disrupt once they run,
// and fails the test if any failed or took over a second.
func lookupsOnNode(t *testing.T, c *cluster.Cluster, tools, name, node string, disrupt func()) {
	t.Helper()
	s := measuredLookupsOnNode(t, c, tools, name, node, disrupt)
	if s.Failed != 0 || s.Slow != 0 {
		t.Errorf("%d failed and %d over 1 s, want none:\n%s", s.Failed, s.Slow, s.problems)
	}
}

// checkAnsweredOnNode resolves a name from a pod on node n and checks that
// n's own skydns counted the queries, and that n's conntrack table holds no
// entry for the node-local address while it holds one for the kube-dns
// Service queried the same way (so the check can fail).
func checkAnsweredOnNode(t *testing.T, c *cluster.Cluster, tools string, n cluster.Node) {
	t.Helper()
	a := c.Cfg().Addresses()
	before := nodeLocalRequests(t, n)
	const lookups = 100
	log := runLookups(t, c, tools, "on-"+n.Name, n.Name, fmt.Sprintf("/tools/lookups web.default.svc.cluster.local 0 %d", lookups))
	s := parseLookups(t, log)
	after := nodeLocalRequests(t, n)
	if s.Failed != 0 || after-before < lookups {
		t.Errorf("%s: %s; its skydns counted %d requests, want at least %d", n.Name, s, after-before, lookups)
	}
	if _, err := exec.Command("ip", "netns", "exec", n.NetNS, "dig", "+short", "+tries=1", "@"+a.ClusterDNS, "web.default.svc.cluster.local").Output(); err != nil {
		t.Fatalf("dig through the kube-dns Service on %s: %v", n.Name, err)
	}
	local, service := conntrackEntries(t, n, a.NodeLocalDNS), conntrackEntries(t, n, a.ClusterDNS)
	if local != 0 || service == 0 {
		t.Errorf("%s: %d conntrack entries to %s (want 0), %d to %s (want some)", n.Name, local, a.NodeLocalDNS, service, a.ClusterDNS)
	}
	t.Logf("%s: %s; %d requests to its skydns; conntrack entries: %d to %s, %d to %s", n.Name, s, after-before, local, a.NodeLocalDNS, service, a.ClusterDNS)
}

var flowEntries = regexp.MustCompile(`(\d+) flow entries`)

// conntrackEntries counts node n's conntrack entries to dst.
func conntrackEntries(t *testing.T, n cluster.Node, dst string) int {
	t.Helper()
	out, err := exec.Command("ip", "netns", "exec", n.NetNS, "conntrack", "-L", "-d", dst).CombinedOutput()
	m := flowEntries.FindSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("conntrack -L -d %s on %s: %v\n%s", dst, n.Name, err, out)
	}
	count, _ := strconv.Atoi(string(m[1]))
	return count
}

var requestsLine = regexp.MustCompile(`(?m)^skydns_dns_requests_total\{[^}]*\} (\S+)$`)

// nodeLocalRequests sums skydns_dns_requests_total of node n's skydns.
func nodeLocalRequests(t *testing.T, n cluster.Node) int {
	t.Helper()
	total := 0.0
	for _, port := range nodeLocalContainers {
		out, err := getInNetNS(t, n.NetNS, "http://"+n.IP+":"+port+"/metrics")
		if err != nil {
			t.Fatalf("metrics of %s:%s: %v", n.Name, port, err)
		}
		for _, m := range requestsLine.FindAllSubmatch(out, -1) {
			v, _ := strconv.ParseFloat(string(m[1]), 64)
			total += v
		}
	}
	return int(total)
}

// getInNetNS GETs url from inside the network namespace netns.
func getInNetNS(t *testing.T, netns, url string) ([]byte, error) {
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: cluster.DialInNetNS(netns)}}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return io.ReadAll(resp.Body)
}

// rolloutNodeLocal restarts the node-local DaemonSet (kubectl rollout
// restart) and waits until every node runs one updated, ready pod and no
// old one.
func rolloutNodeLocal(t *testing.T, c *cluster.Cluster) {
	t.Helper()
	start := time.Now()
	rolloutDaemonSet(t, c, nodeLocalSet)
	t.Logf("rollout of %d nodes done in %s", c.Cfg().Nodes, time.Since(start).Round(100*time.Millisecond))
}

// waitDaemonSet waits until the DaemonSet has one updated, available pod
// on every node and no other.
func waitDaemonSet(t *testing.T, c *cluster.Cluster, name string) {
	t.Helper()
	polltest.Every(t, 5*time.Minute, apiPoll, "daemonset "+name+" rolled out", func() error {
		ds, err := c.Client.AppsV1().DaemonSets("kube-system").Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		s := ds.Status
		if s.ObservedGeneration < ds.Generation || s.DesiredNumberScheduled != int32(c.Cfg().Nodes) || s.UpdatedNumberScheduled != s.DesiredNumberScheduled ||
			s.NumberAvailable != s.DesiredNumberScheduled || s.CurrentNumberScheduled != s.DesiredNumberScheduled {
			return fmt.Errorf("%d of %d updated, %d available", s.UpdatedNumberScheduled, s.DesiredNumberScheduled, s.NumberAvailable)
		}
		pods, err := c.Client.CoreV1().Pods("kube-system").List(t.Context(), metav1.ListOptions{LabelSelector: metav1.FormatLabelSelector(ds.Spec.Selector)})
		if err != nil {
			return err
		}
		if len(pods.Items) != int(s.DesiredNumberScheduled) {
			return fmt.Errorf("%d pods, want %d (old ones still stopping)", len(pods.Items), s.DesiredNumberScheduled)
		}
		return nil
	})
}

// rolloutDaemonSet restarts the DaemonSet name (kubectl rollout restart)
// and waits for it.
func rolloutDaemonSet(t *testing.T, c *cluster.Cluster, name string) {
	t.Helper()
	kubectl(t, c, nil, "-n", "kube-system", "rollout", "restart", "daemonset/"+name)
	waitDaemonSet(t, c, name)
}

// nodeLocalSelector selects the node-local DaemonSet's pods.
const nodeLocalSelector = "app.kubernetes.io/component=node-local"

// killNodeLocal sends SIGKILL to the skydns on node n, as the kernel's OOM
// killer would, waits until the kubelet has restarted it and it is ready
// again, and checks that the holder answered through the kube-dns Service
// meanwhile and released the dead skydns's sockets to the new one.
func killNodeLocal(t *testing.T, c *cluster.Cluster, n cluster.Node) {
	t.Helper()
	released := func() int {
		return strings.Count(nodeLocalLog(t, c, n, nodeLocalHolder), "released a gone skydns's sockets")
	}
	before := released()
	killAndWait(t, c, n, nodeLocalPID(t, n, nodeLocalContainers["skydns"]), nodeLocalSelector, "skydns")
	polltest.Every(t, time.Minute, apiPoll, "the holder releasing the killed skydns's sockets", func() error {
		if released() == before {
			return fmt.Errorf("no new line saying so in the holder's log")
		}
		return nil
	})
}

// killHolder sends SIGKILL to the holder on node n and waits until the
// kubelet has restarted it and it holds the skydns's sockets again.
func killHolder(t *testing.T, c *cluster.Cluster, n cluster.Node) {
	t.Helper()
	pids := pidsOnNode(t, n, "/skydns-holder", "--upstream=")
	if len(pids) != 1 {
		t.Fatalf("skydns-holder on %s: found pids %v, want one", n.Name, pids)
	}
	killAndWait(t, c, n, pids[0], nodeLocalSelector, nodeLocalHolder)
	polltest.Every(t, time.Minute, apiPoll, "the restarted holder holding skydns's sockets", func() error {
		if !strings.Contains(nodeLocalLog(t, c, n, nodeLocalHolder), "sharing sockets with a peer") {
			return fmt.Errorf("no line saying so in the holder's log")
		}
		return nil
	})
}

// nodeLocalLog is the log of container in n's node-local pod.
func nodeLocalLog(t *testing.T, c *cluster.Cluster, n cluster.Node, container string) string {
	t.Helper()
	pod := podOn(t, c, nodeLocalSelector, n.Name)
	data, err := c.Client.CoreV1().Pods("kube-system").GetLogs(pod.Name, &corev1.PodLogOptions{Container: container}).DoRaw(t.Context())
	if err != nil {
		t.Fatalf("the log of %s in %s: %v", container, pod.Name, err)
	}
	return string(data)
}

// killAndWait sends SIGKILL to pid, container's process in the pod
// selected by selector on node n, and waits until the kubelet has
// restarted the container and it is ready again.
func killAndWait(t *testing.T, c *cluster.Cluster, n cluster.Node, pid int, selector, container string) {
	t.Helper()
	restarts := restartCount(podOn(t, c, selector, n.Name), container)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 %d (%s on %s): %v", pid, container, n.Name, err)
	}
	start := time.Now()
	polltest.Every(t, 3*time.Minute, apiPoll, container+" on "+n.Name+" restarted and ready", func() error {
		p := podOn(t, c, selector, n.Name)
		if restartCount(p, container) <= restarts || !containerReady(p, container) {
			return fmt.Errorf("%s: %d restarts, ready %v", container, restartCount(p, container), containerReady(p, container))
		}
		return nil
	})
	t.Logf("kill -9 of %s (pid %d) on %s: restarted and ready %s later", container, pid, n.Name, time.Since(start).Round(100*time.Millisecond))
}

// podOn returns the pod in kube-system selected by selector on node that
// is not being deleted.
func podOn(t *testing.T, c *cluster.Cluster, selector, node string) *corev1.Pod {
	t.Helper()
	pods, err := c.Client.CoreV1().Pods("kube-system").List(t.Context(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName == node && p.DeletionTimestamp == nil {
			return &p
		}
	}
	t.Fatalf("no pod %s on %s", selector, node)
	return nil
}

func restartCount(pod *corev1.Pod, container string) int32 {
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name == container {
			return s.RestartCount
		}
	}
	return -1
}

func containerReady(pod *corev1.Pod, container string) bool {
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name == container {
			return s.Ready
		}
	}
	return false
}

// nodeLocalPID finds the skydns of node n serving metrics on port.
func nodeLocalPID(t *testing.T, n cluster.Node, port string) int {
	t.Helper()
	pids := pidsOnNode(t, n, "--node-local-interface", "--http-addr=0.0.0.0:"+port)
	if len(pids) != 1 {
		t.Fatalf("skydns with metrics on :%s on %s: found pids %v, want one", port, n.Name, pids)
	}
	return pids[0]
}

// pidsOnNode lists the processes whose arguments contain every marker, in
// a cgroup under node n's cgroup root (its pods' containers).
func pidsOnNode(t *testing.T, n cluster.Node, markers ...string) []int {
	t.Helper()
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var found []int
	for _, dir := range dirs {
		cmdline, err := os.ReadFile(filepath.Join(dir, "cmdline"))
		if err != nil || !containsAll(string(cmdline), markers) {
			continue
		}
		cgroup, err := os.ReadFile(filepath.Join(dir, "cgroup"))
		if err != nil || !strings.Contains(string(cgroup), "/"+n.CgroupRoot+"/") {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(dir))
		found = append(found, pid)
	}
	return found
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
