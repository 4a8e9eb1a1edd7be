package clustertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesky/kubesky/bench/proc"
	"github.com/kubesky/kubesky/cluster"
	"github.com/kubesky/kubesky/internal/polltest"
)

// The comparison's sizes: names resolved cold then warm from each node,
// and Services whose address changes at once.
const (
	comparedNames   = 200
	comparedChanges = 10
	// scaledServices Services of scaledEndpoints endpoints each: the zone a
	// node-local server holds in the memory and CPU figures.
	scaledServices  = 10000
	scaledEndpoints = 5
	// raceLookups glibc lookups, in raceThreads threads, as fast as they
	// go: the conntrack race of parallel A and AAAA queries.
	raceLookups = 100000
	raceThreads = 50
)

// nodeLocalCacheSet is the DaemonSet of the anchor: CoreDNS with NodeLocal
// DNSCache's Corefile.
const nodeLocalCacheSet = "node-local-dns"

// serverFigures are what the comparison measures of one node-local server.
type serverFigures struct {
	name         string
	cold, warm   []lookupSummary // per node
	propagation  []time.Duration // per change and node
	rollout      lookupSummary
	kill         lookupSummary
	raceService  lookupSummary
	raceLocal    lookupSummary
	insertFailed [2]int          // conntrack insert_failed during the Service and the node-local race
	memory       []int64         // resident bytes per node, of every process of the server
	cpu          []time.Duration // CPU time per node over the scaled lookups
	scaledPass   []lookupSummary // per node: every scaled name once
}

// TestNodeLocalComparison measures deploy/node-local's skydns and CoreDNS
// configured as NodeLocal DNSCache configures it, one after the other in
// the same cluster, and writes the table to bench/results/node-local.md
// (make bench-node-local).
func TestNodeLocalComparison(t *testing.T) {
	if os.Getenv("KUBESKY_BENCH_NODE_LOCAL") != "1" {
		t.Skip("a benchmark of minutes: run with KUBESKY_BENCH_NODE_LOCAL=1 (make bench-node-local)")
	}
	c := startCluster(t, cluster.TopologyNodeLocal)
	tools := buildLookups(t, c)
	createService(t, c, "web")
	names := createCompared(t, c, comparedNames)
	writeNames(t, tools, "names.txt", names)
	start := time.Now()
	writeNames(t, tools, "scaled.txt", createScaled(t, c))
	t.Logf("%d Services of %d endpoints created and answered on every node in %s", scaledServices, scaledEndpoints, time.Since(start).Round(time.Second))

	skydns := measureServer(t, c, tools, "skydns", "skydns (deploy/node-local)", names, 1,
		func(n cluster.Node) { killNodeLocal(t, c, n) }, func() { rolloutNodeLocal(t, c) })
	scaledPass(t, c, tools, "skydns", skydns, "/run/skydns-peers") // skydns and skydns-holder
	proxyMemory := nodeMemory(t, c, "--allowed-cn")                // the relays (skydns relay)

	kubectl(t, c, nil, "-n", "kube-system", "delete", "daemonset", nodeLocalSet, "--wait=true")
	deployNodeLocalCache(t, c)
	coredns := measureServer(t, c, tools, "coredns", "CoreDNS as NodeLocal DNSCache", names, 2,
		func(n cluster.Node) { killCacheOn(t, c, n) }, func() { rolloutDaemonSet(t, c, nodeLocalCacheSet) })
	scaledPass(t, c, tools, "coredns", coredns, "/etc/coredns/Corefile")

	table := comparisonTable(c, []*serverFigures{skydns, coredns}, proxyMemory)
	t.Log("\n" + table)
	if err := os.WriteFile(filepath.Join(c.Cfg().RepoDir, "bench", "results", "node-local.md"), []byte(table), 0o644); err != nil {
		t.Fatal(err)
	}
}

// measureServer runs every measurement against the node-local server
// deployed now; tag names its client pods, and round is the how-manieth
// address change of the compared Services this is.
func measureServer(t *testing.T, c *cluster.Cluster, tools, tag, name string, names []string, round int, kill func(cluster.Node), rollout func()) *serverFigures {
	f := &serverFigures{name: name}
	pass := fmt.Sprintf("/tools/lookups @/tools/names.txt 0 %d", len(names))
	for i, n := range c.Cfg().AllNodes() {
		cold := runLookups(t, c, tools, fmt.Sprintf("%s-cold-%d", tag, i+1), n.Name, pass)
		warm := runLookups(t, c, tools, fmt.Sprintf("%s-warm-%d", tag, i+1), n.Name, pass)
		f.cold, f.warm = append(f.cold, parseLookups(t, cold)), append(f.warm, parseLookups(t, warm))
	}
	f.propagation = measurePropagation(t, c, names[:comparedChanges], round)
	node := c.Cfg().Node(min(2, c.Cfg().Nodes))
	f.rollout = measuredLookupsOnNode(t, c, tools, tag+"-rollout", node.Name, rollout)
	f.kill = measuredLookupsOnNode(t, c, tools, tag+"-kill", node.Name, func() { kill(node) })
	a := c.Cfg().Addresses()
	f.raceService, f.insertFailed[0] = race(t, c, tools, tag, node, a.ClusterDNS)
	f.raceLocal, f.insertFailed[1] = race(t, c, tools, tag, node, a.NodeLocalDNS)
	return f
}

// measuredLookupsOnNode runs nodeLocalLookups glibc lookups of web at
// nodeLocalRate a second from a pod on node, calls disrupt once they run,
// and returns their summary.
func measuredLookupsOnNode(t *testing.T, c *cluster.Cluster, tools, name, node string, disrupt func()) lookupSummary {
	script := fmt.Sprintf("echo started; exec /tools/lookups web.default.svc.cluster.local %d %d", nodeLocalRate, nodeLocalLookups)
	return measuredLookups(t, c, tools, name, node, script, disrupt)
}

// measuredLookups runs script, a testdata/lookups.c run printing
// "started" first, in a pod on node, calls disrupt once it runs, and
// returns its summary.
func measuredLookups(t *testing.T, c *cluster.Cluster, tools, name, node, script string, disrupt func()) lookupSummary {
	startToolPod(t, c, tools, name, node, script)
	waitForLog(t, c, name, func(log string) bool { return strings.Contains(log, "started") })
	time.Sleep(2 * time.Second) // lookups before the disruption: a duration, not a wait for a condition
	disrupt()
	s := parseLookups(t, waitForLog(t, c, name, func(log string) bool { return strings.Contains(log, "END") }))
	kubectl(t, c, nil, "delete", "pod", name, "--wait=false")
	t.Logf("%s on %s: %s", name, node, s)
	return s
}

// createCompared makes n selectorless Services cmp-<i> in default, each
// with an EndpointSlice of one address, and returns their names, once
// the cluster DNS answers the last.
func createCompared(t *testing.T, c *cluster.Cluster, n int) []string {
	t.Helper()
	var names []string
	for i := range n {
		svc := fmt.Sprintf("cmp-%d", i)
		if _, err := c.Client.CoreV1().Services("default").Create(t.Context(), &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: svc},
			Spec:       corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		setEndpoint(t, c, svc, comparedAddress(i, 0), true)
		names = append(names, svc+".default.svc.cluster.local.")
	}
	last := names[len(names)-1]
	polltest.Every(t, 2*time.Minute, apiPoll, last+" resolving", func() error { return resolves(t, c, last) })
	return names
}

// comparedAddress is Service i's address after change changes.
func comparedAddress(i, change int) string { return fmt.Sprintf("10.250.%d.%d", change, i+1) }

// setEndpoint makes (create) or updates the EndpointSlice of svc to hold
// one ready address.
func setEndpoint(t *testing.T, c *cluster.Cluster, svc, ip string, create bool) {
	t.Helper()
	ready := true
	port, name := int32(80), "http"
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: svc, Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
		Ports:       []discoveryv1.EndpointPort{{Name: &name, Port: &port}},
	}
	slices := c.Client.DiscoveryV1().EndpointSlices("default")
	var err error
	if create {
		_, err = slices.Create(t.Context(), slice, metav1.CreateOptions{})
	} else {
		_, err = slices.Update(t.Context(), slice, metav1.UpdateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
}

// measurePropagation changes the address of every named Service at once
// (each name asked on every node first, so a cache holds it) and returns,
// per Service and node, the time from the API server's acknowledgement
// until the node-local address answers the new address.
func measurePropagation(t *testing.T, c *cluster.Cluster, names []string, round int) []time.Duration {
	t.Helper()
	nodes := c.Cfg().AllNodes()
	server := cluster.DNSPort(c.Cfg().Addresses().NodeLocalDNS)
	for _, n := range nodes {
		for _, name := range names {
			if _, err := exchangeOnNode(n, server, name); err != nil {
				t.Fatalf("%s on %s: %v", name, n.Name, err)
			}
		}
	}
	changed := make([]time.Time, len(names))
	for i, name := range names {
		svc, _, _ := strings.Cut(name, ".")
		setEndpoint(t, c, svc, comparedAddress(i, round), false)
		changed[i] = time.Now()
	}
	var delays []time.Duration
	pending := map[[2]int]bool{}
	for i := range names {
		for j := range nodes {
			pending[[2]int{i, j}] = true
		}
	}
	polltest.Every(t, 2*time.Minute, 20*time.Millisecond, "every node answering the new addresses", func() error {
		for key := range pending {
			reply, err := exchangeOnNode(nodes[key[1]], server, names[key[0]])
			if err == nil && answers(reply, comparedAddress(key[0], round)) {
				delays = append(delays, time.Since(changed[key[0]]))
				delete(pending, key)
			}
		}
		if len(pending) > 0 {
			return fmt.Errorf("%d of %d answers still old", len(pending), len(names)*len(nodes))
		}
		return nil
	})
	slices.Sort(delays)
	return delays
}

// exchangeOnNode asks server for name's A record from inside node n's
// network namespace.
func exchangeOnNode(n cluster.Node, server, name string) (*dns.Msg, error) {
	conn, err := cluster.DialInNetNS(n.NetNS)(context.Background(), "udp", server)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	m := new(dns.Msg)
	m.SetQuestion(name, dns.TypeA)
	reply, _, err := (&dns.Client{Timeout: 2 * time.Second}).ExchangeWithConn(m, &dns.Conn{Conn: conn})
	return reply, err
}

// race runs raceLookups parallel glibc lookups on node n with server as
// the only nameserver, and returns their summary and how much the node's
// conntrack insert_failed counter grew meanwhile.
func race(t *testing.T, c *cluster.Cluster, tools, tag string, n cluster.Node, server string) (lookupSummary, int) {
	t.Helper()
	before := insertFailed(t, n)
	script := fmt.Sprintf("printf 'nameserver %s\\noptions ndots:1\\n' > /etc/resolv.conf; exec /tools/lookups web.default.svc.cluster.local. 0 %d %d", server, raceLookups, raceThreads)
	s := parseLookups(t, runLookups(t, c, tools, tag+"-race-"+strings.ReplaceAll(server, ".", "-"), n.Name, script))
	failed := insertFailed(t, n) - before
	t.Logf("race through %s on %s: %s; conntrack insert_failed +%d", server, n.Name, s, failed)
	return s, failed
}

// insertFailed sums the insert_failed counters of node n's conntrack
// (conntrack -S, one line per CPU).
func insertFailed(t *testing.T, n cluster.Node) int {
	t.Helper()
	out, err := exec.Command("ip", "netns", "exec", n.NetNS, "conntrack", "-S").CombinedOutput()
	if err != nil {
		t.Fatalf("conntrack -S on %s: %v\n%s", n.Name, err, out)
	}
	total := 0
	for _, field := range strings.Fields(string(out)) {
		if v, ok := strings.CutPrefix(field, "insert_failed="); ok {
			n, _ := strconv.Atoi(v)
			total += n
		}
	}
	return total
}

// createScaled makes scaledServices selectorless Services big-<i>, each
// with an EndpointSlice of scaledEndpoints addresses, and returns their
// names once every node's node-local address answers the last.
func createScaled(t *testing.T, c *cluster.Cluster) []string {
	t.Helper()
	names := make([]string, scaledServices)
	work := make(chan int)
	errs := make(chan error, 16)
	for range 16 {
		go func() {
			for i := range work {
				errs <- createBig(t, c, i)
			}
		}()
	}
	go func() {
		for i := range scaledServices {
			work <- i
		}
		close(work)
	}()
	for i := range scaledServices {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
		names[i] = fmt.Sprintf("big-%d.default.svc.cluster.local.", i)
	}
	server := cluster.DNSPort(c.Cfg().Addresses().NodeLocalDNS)
	for _, n := range c.Cfg().AllNodes() {
		polltest.Every(t, 10*time.Minute, time.Second, "the last scaled name on "+n.Name, func() error {
			_, err := exchangeOnNode(n, server, names[len(names)-1])
			return err
		})
	}
	return names
}

// createBig makes Service big-<i> and its EndpointSlice.
func createBig(t *testing.T, c *cluster.Cluster, i int) error {
	name := fmt.Sprintf("big-%d", i)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}
	if _, err := c.Client.CoreV1().Services("default").Create(t.Context(), svc, metav1.CreateOptions{}); err != nil {
		return err
	}
	ready, port, portName := true, int32(80), "http"
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: name}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &portName, Port: &port}},
	}
	for j := range scaledEndpoints {
		slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{fmt.Sprintf("10.%d.%d.%d", 100+j, i/250, i%250+1)},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready},
		})
	}
	_, err := c.Client.DiscoveryV1().EndpointSlices("default").Create(t.Context(), slice, metav1.CreateOptions{})
	return err
}

// scaledPass resolves every scaled name once from a pod on each node, and
// records per node the server's resident memory after it and the CPU time
// its processes (marked by marker) spent during it.
func scaledPass(t *testing.T, c *cluster.Cluster, tools, tag string, f *serverFigures, marker string) {
	t.Helper()
	for i, n := range c.Cfg().AllNodes() {
		before := nodeCPU(t, n, marker)
		log := runLookups(t, c, tools, fmt.Sprintf("%s-scaled-%d", tag, i+1), n.Name, fmt.Sprintf("/tools/lookups @/tools/scaled.txt 0 %d", scaledServices))
		f.cpu = append(f.cpu, nodeCPU(t, n, marker)-before)
		f.scaledPass = append(f.scaledPass, parseLookups(t, log))
	}
	f.memory = nodeMemory(t, c, marker)
}

// nodeCPU sums the CPU time of node n's processes marked by marker.
func nodeCPU(t *testing.T, n cluster.Node, marker string) time.Duration {
	t.Helper()
	var total time.Duration
	for _, pid := range pidsOnNode(t, n, marker) {
		cpu, err := proc.CPUTime(pid)
		if err != nil {
			t.Fatal(err)
		}
		total += cpu
	}
	return total
}

// nodeMemory sums, per node, the resident memory of the processes whose
// arguments contain marker, in a cgroup under the node's root.
func nodeMemory(t *testing.T, c *cluster.Cluster, marker string) []int64 {
	t.Helper()
	var out []int64
	for _, n := range c.Cfg().AllNodes() {
		var total int64
		for _, pid := range pidsOnNode(t, n, marker) {
			m, err := proc.ReadMemory(pid)
			if err != nil {
				t.Fatal(err)
			}
			total += m.RSS
		}
		out = append(out, total)
	}
	return out
}

// writeNames writes names, one a line, into dir/file.
func writeNames(t *testing.T, dir, file string, names []string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, file), []byte(strings.Join(names, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// nodeLocalCacheCorefile is NodeLocal DNSCache's Corefile (its
// nodelocaldns.yaml), bound to the node-local address only: cluster names
// cached (success 30 s, denial 5 s) and forwarded over TCP to the kube-dns
// Service, other names to the node's resolvers.
const nodeLocalCacheCorefile = `cluster.local:53 in-addr.arpa:53 ip6.arpa:53 {
    errors
    cache {
        success 9984 30
        denial 9984 5
    }
    reload
    loop
    bind %[1]s
    forward . %[2]s {
        force_tcp
    }
    prometheus :9253
    health %[1]s:8080
}
.:53 {
    errors
    cache 30
    reload
    loop
    bind %[1]s
    forward . /etc/resolv.conf
    prometheus :9253
}
`

// deployNodeLocalCache runs CoreDNS as NodeLocal DNSCache runs it: a
// hostNetwork DaemonSet on the node-local address (which deploy/node-local
// made on each node and left), updated one node at a time (its
// maxUnavailable of 10%), and waits until every node's pod is ready.
func deployNodeLocalCache(t *testing.T, c *cluster.Cluster) {
	t.Helper()
	a := c.Cfg().Addresses()
	corefile := fmt.Sprintf(nodeLocalCacheCorefile, a.NodeLocalDNS, a.ClusterDNS)
	manifest := fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: %[1]s, namespace: kube-system}
data:
  Corefile: %[2]q
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: %[1]s, namespace: kube-system}
spec:
  selector: {matchLabels: {k8s-app: %[1]s}}
  updateStrategy: {rollingUpdate: {maxUnavailable: 10%%}}
  template:
    metadata: {labels: {k8s-app: %[1]s}}
    spec:
      hostNetwork: true
      dnsPolicy: Default
      priorityClassName: system-node-critical
      tolerations: [{operator: Exists}]
      containers:
        - name: node-cache
          image: %[3]s
          imagePullPolicy: Never
          command: ["/coredns", "-conf", "/etc/coredns/Corefile"]
          securityContext: {capabilities: {add: [NET_ADMIN]}}
          livenessProbe: {httpGet: {host: %[4]s, path: /health, port: 8080}, initialDelaySeconds: 60, timeoutSeconds: 5}
          readinessProbe: {httpGet: {host: %[4]s, path: /health, port: 8080}, periodSeconds: 2}
          volumeMounts: [{name: config, mountPath: /etc/coredns}]
      volumes: [{name: config, configMap: {name: %[1]s}}]
`, nodeLocalCacheSet, corefile, cluster.AgnhostImage, a.NodeLocalDNS)
	kubectl(t, c, []byte(manifest), "apply", "-f", "-")
	waitDaemonSet(t, c, nodeLocalCacheSet)
}

// killCacheOn sends SIGKILL to the anchor's CoreDNS on node n and waits
// until it is restarted and ready.
func killCacheOn(t *testing.T, c *cluster.Cluster, n cluster.Node) {
	t.Helper()
	pids := pidsOnNode(t, n, "/etc/coredns/Corefile")
	if len(pids) != 1 {
		t.Fatalf("CoreDNS on %s: pids %v, want one", n.Name, pids)
	}
	killAndWait(t, c, n, pids[0], "k8s-app="+nodeLocalCacheSet, "node-cache")
}

// comparisonTable is the Markdown of bench/results/node-local.md.
func comparisonTable(c *cluster.Cluster, servers []*serverFigures, proxyMemory []int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Node-local DNS: skydns and CoreDNS as NodeLocal DNSCache\n\n")
	fmt.Fprintf(&b, "`make bench-node-local`, one run, %s, on a real cluster of %d nodes on this 2-core machine (%s).\n",
		time.Now().UTC().Format("2006-01-02"), c.Cfg().Nodes, "kube-apiserver, etcd, kubelets and the clients share the cores")
	fmt.Fprintf(&b, "Lookups are glibc's getaddrinfo (A and AAAA in parallel) from a pod on the node; each row is per node where it says so.\n\n")
	fmt.Fprintf(&b, "| | %s |\n|---|", strings.Join(serverNames(servers), " | "))
	for range servers {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	row := func(label string, cell func(f *serverFigures) string) {
		fmt.Fprintf(&b, "| %s |", label)
		for _, f := range servers {
			fmt.Fprintf(&b, " %s |", cell(f))
		}
		b.WriteString("\n")
	}
	for i, n := range c.Cfg().AllNodes() {
		row(fmt.Sprintf("%s: %d names, first lookup (cold) p50 / p99 / max", n.Name, comparedNames), func(f *serverFigures) string { return latencies(f.cold[i]) })
		row(fmt.Sprintf("%s: the same names again (warm) p50 / p99 / max", n.Name), func(f *serverFigures) string { return latencies(f.warm[i]) })
	}
	row(fmt.Sprintf("Service address changed → every node answers it (%d changes × %d nodes) p50 / p99 / max", comparedChanges, c.Cfg().Nodes), func(f *serverFigures) string {
		return fmt.Sprintf("%s / %s / %s", short(pct(f.propagation, 50)), short(pct(f.propagation, 99)), short(pct(f.propagation, 100)))
	})
	row(fmt.Sprintf("DaemonSet rolling update, %d lookups at %d/s: failed / over 1 s", nodeLocalLookups, nodeLocalRate), func(f *serverFigures) string { return failures(f.rollout) })
	row(fmt.Sprintf("kill -9 of one server process on the node, %d lookups at %d/s: failed / over 1 s", nodeLocalLookups, nodeLocalRate), func(f *serverFigures) string { return failures(f.kill) })
	row(fmt.Sprintf("%d parallel lookups (%d threads) through the kube-dns Service: failed / over 1 s / conntrack insert_failed", raceLookups, raceThreads), func(f *serverFigures) string {
		return fmt.Sprintf("%s / %d", failures(f.raceService), f.insertFailed[0])
	})
	row("the same through the node-local address: failed / over 1 s / conntrack insert_failed", func(f *serverFigures) string {
		return fmt.Sprintf("%s / %d", failures(f.raceLocal), f.insertFailed[1])
	})
	scale := fmt.Sprintf("%d Services × %d endpoints", scaledServices, scaledEndpoints)
	row(scale+": every name once from each node, p50 / p99 / max (node 1)", func(f *serverFigures) string { return latencies(f.scaledPass[0]) })
	row(scale+": CPU of the server per node during that pass (s)", func(f *serverFigures) string {
		var cells []string
		for _, d := range f.cpu {
			cells = append(cells, fmt.Sprintf("%.2f", d.Seconds()))
		}
		return strings.Join(cells, " / ")
	})
	row(scale+": resident memory per node, every process of the server (MiB)", func(f *serverFigures) string { return mebibytes(f.memory) })
	fmt.Fprintf(&b, "\nskydns's column counts both processes of each node's pod, skydns and skydns-holder. The zone reaches them through `kubesky-etcd-relay` "+
		"(the read-only relays, `skydns relay`; resident memory of its pods, by node: %s MiB, 0 where none runs) and the shared etcd; "+
		"CoreDNS's cache forwards misses to the `kube-dns` Service (the same skydns replicas, over TCP).\n", mebibytes(proxyMemory))
	return b.String()
}

func mebibytes(bytes []int64) string {
	var cells []string
	for _, m := range bytes {
		cells = append(cells, fmt.Sprintf("%.0f", float64(m)/(1<<20)))
	}
	return strings.Join(cells, " / ")
}

func serverNames(servers []*serverFigures) []string {
	var out []string
	for _, f := range servers {
		out = append(out, f.name)
	}
	return out
}

func latencies(s lookupSummary) string {
	us := func(n int) string { return short(time.Duration(n) * time.Microsecond) }
	return fmt.Sprintf("%s / %s / %s", us(s.P50US), us(s.P99US), us(s.MaxUS))
}

func failures(s lookupSummary) string { return fmt.Sprintf("%d / %d", s.Failed, s.Slow) }

// short rounds d for a table cell.
func short(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}

// pct is the p-th percentile of sorted (100: the maximum).
func pct(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := min(len(sorted)*p/100, len(sorted)-1)
	return sorted[i]
}
