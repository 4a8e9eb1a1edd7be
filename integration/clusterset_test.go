package integration

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/mcs-api/config/crd"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
	mcsclient "sigs.k8s.io/mcs-api/pkg/client/clientset/versioned"

	"github.com/kubesky/kubesky/integration/harness"
	"github.com/kubesky/kubesky/internal/polltest"
)

// clustersetLease is the clusterset lease TTL the test's kube2sky use, 3 s
// unless KUBESKY_CLUSTERSET_LEASE gives another (the default, 12s, to
// measure it): a stopped cluster's exports must be gone within it (and a
// margin).
var clustersetLease = leaseFromEnv("KUBESKY_CLUSTERSET_LEASE", 3*time.Second)

// leaseFromEnv is the duration the environment variable name holds, or
// def when it is unset; a value that is not a duration stops the tests.
func leaseFromEnv(name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		panic(fmt.Sprintf("%s=%q: want a positive duration such as 12s", name, v))
	}
	return d
}

// mcsCluster is one cluster of the clusterset: its own etcd and
// kube-apiserver, the MCS CRDs, and a kube2sky publishing into the broker.
type mcsCluster struct {
	id       string
	api      *harness.APIServer
	mcs      mcsclient.Interface
	kube2sky *harness.Kube2Sky
	// kubesky is a client with kube2sky's identity (kubesky's service
	// account and deploy/'s RBAC).
	kubesky kubernetes.Interface
}

// TestClustersetTwoClustersShareOneEtcd runs two clusters whose kube2sky
// publish their ServiceExports into one shared etcd, and a skydns answering
// clusterset.local from it, checked with dig.
func TestClustersetTwoClustersShareOneEtcd(t *testing.T) {
	harness.RequireDig(t)
	broker := harness.StartEtcd(t)
	east, west := startMCSCluster(t, "east", broker.Endpoint), startMCSCluster(t, "west", broker.Endpoint)
	sky := harness.StartSkyDNS(t, broker.Endpoint, "--prefix=/skydns-east", "--clusterset-prefix=/clusterset", "--cluster-id=east")
	skyWest := harness.StartSkyDNS(t, broker.Endpoint, "--prefix=/skydns-west", "--clusterset-prefix=/clusterset", "--cluster-id=west")

	exportService(t, east, mcsHeadlessService("db"), mcsEndpointSlice("db", "10.1.0.5", ptr.To("db-0")))
	exportService(t, west, mcsHeadlessService("db"), mcsEndpointSlice("db", "10.2.0.9", nil))

	t.Run("the headless name answers both clusters' ready endpoints", func(t *testing.T) {
		digWithin(t, sky.DNSAddr, "db.shop.svc.clusterset.local.", "A", dns.RcodeSuccess, "10.1.0.5", "10.2.0.9")
		digWithin(t, sky.DNSAddr, "db-0.east.db.shop.svc.clusterset.local.", "A", dns.RcodeSuccess, "10.1.0.5")
		digWithin(t, sky.DNSAddr, "10-2-0-9.west.db.shop.svc.clusterset.local.", "A", dns.RcodeSuccess, "10.2.0.9")
		digWithin(t, sky.DNSAddr, "_sql._tcp.db.shop.svc.clusterset.local.", "SRV", dns.RcodeSuccess,
			"0 1 5432 db-0.east.db.shop.svc.clusterset.local.", "0 1 5432 10-2-0-9.west.db.shop.svc.clusterset.local.")
		digWithin(t, sky.DNSAddr, "east.db.shop.svc.clusterset.local.", "A", dns.RcodeNameError)
		digWithin(t, sky.DNSAddr, "dns-version.clusterset.local.", "TXT", dns.RcodeSuccess, `"1.0.0"`)
	})
	t.Run("each ServiceExport is Valid, Ready and without a conflict", func(t *testing.T) {
		for _, c := range []*mcsCluster{east, west} {
			conditionWithin(t, c, "db", mcsv1beta1.ServiceExportConditionReady, metav1.ConditionTrue, mcsv1beta1.ServiceExportReasonExported)
			conditionWithin(t, c, "db", mcsv1beta1.ServiceExportConditionConflict, metav1.ConditionFalse, mcsv1beta1.ServiceExportReasonNoConflicts)
		}
	})
	t.Run("each cluster has the headless ServiceImport, with both clusters in its status", func(t *testing.T) {
		for _, c := range []*mcsCluster{east, west} {
			importWithin(t, c, "shop", "db", "Headless", []string{"sql/TCP/5432"}, []string{"east", "west"})
		}
	})
	t.Run("each cluster has MCS EndpointSlices of every exporting cluster's endpoints", func(t *testing.T) {
		for _, c := range []*mcsCluster{east, west} {
			mcsSlicesWithin(t, c, "shop", "db", map[string][]string{"east": {"10.1.0.5"}, "west": {"10.2.0.9"}})
		}
	})
	t.Run("the ServiceImport's ports are the union, and it goes with the last export", func(t *testing.T) {
		testImportLifecycle(t, east, west)
	})
	t.Run("a namespace only one cluster has gets no ServiceImport elsewhere until it is created", func(t *testing.T) {
		createNamespace(t, east.api.Client, "solo")
		solo := mcsHeadlessService("solo")
		solo.Namespace = "solo"
		exportService(t, east, solo, mcsEndpointSlice("solo", "10.1.0.11", nil))
		importWithin(t, east, "solo", "solo", "Headless", []string{"sql/TCP/5432"}, []string{"east"})
		// west imports an export made after solo's only once it has seen solo's
		exportService(t, east, mcsHeadlessService("after-solo"), nil)
		importWithin(t, west, "shop", "after-solo", "Headless", []string{"sql/TCP/5432"}, []string{"east"})
		noImport(t, west, "solo", "solo")
		createNamespace(t, west.api.Client, "solo")
		importWithin(t, west, "solo", "solo", "Headless", []string{"sql/TCP/5432"}, []string{"east"})
		mcsSlicesWithin(t, west, "solo", "solo", map[string][]string{"east": {"10.1.0.11"}})
	})
	t.Run("export created: ServiceImports present and DNS answering in both clusters", func(t *testing.T) {
		measureImportLatency(t, east, west, sky.DNSAddr, skyWest.DNSAddr)
	})
	t.Run("a ServiceExport without its Service is not Valid and not published", func(t *testing.T) {
		createServiceExport(t, east, "shop", "missing")
		conditionWithin(t, east, "missing", mcsv1beta1.ServiceExportConditionValid, metav1.ConditionFalse, mcsv1beta1.ServiceExportReasonNoService)
		digWithin(t, sky.DNSAddr, "missing.shop.svc.clusterset.local.", "A", dns.RcodeNameError)
	})
	t.Run("an ExternalName Service is not Valid", func(t *testing.T) {
		ext := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "ext"},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.org"}}
		exportService(t, west, ext, nil)
		conditionWithin(t, west, "ext", mcsv1beta1.ServiceExportConditionValid, metav1.ConditionFalse, mcsv1beta1.ServiceExportReasonInvalidServiceType)
		// the condition is set after the publisher's pass, which published nothing
		noImport(t, west, "shop", "ext")
		noImport(t, east, "shop", "ext")
	})
	t.Run("a type conflict is on both exports and the oldest decides", func(t *testing.T) {
		web := mcsHeadlessService("web")
		exportService(t, east, web, mcsEndpointSlice("web", "10.1.0.8", nil))
		conditionWithin(t, east, "web", mcsv1beta1.ServiceExportConditionReady, metav1.ConditionTrue, mcsv1beta1.ServiceExportReasonExported)
		web = mcsHeadlessService("web")
		web.Spec.ClusterIP = ""
		exportService(t, west, web, mcsEndpointSlice("web", "10.2.0.8", nil))
		for _, c := range []*mcsCluster{east, west} {
			conditionWithin(t, c, "web", mcsv1beta1.ServiceExportConditionConflict, metav1.ConditionTrue, mcsv1beta1.ServiceExportReasonTypeConflict)
		}
		digWithin(t, sky.DNSAddr, "web.shop.svc.clusterset.local.", "A", dns.RcodeSuccess, "10.1.0.8", "10.2.0.8")
	})
	t.Run("a ClusterSetIP export gets a derived Service in each cluster, whose IP that cluster's skydns answers", func(t *testing.T) {
		testDerivedServices(t, broker, east, west, map[*mcsCluster]string{east: sky.DNSAddr, west: skyWest.DNSAddr})
	})
	t.Run("a dual-stack export gets a clusterset IP per family, answered A and AAAA", func(t *testing.T) {
		testDualStackDerived(t, east, west, sky.DNSAddr)
	})
	t.Run("ClusterSetIP export created: every cluster answers its derived IP", func(t *testing.T) {
		measureClusterSetIPLatency(t, east, map[*mcsCluster]string{east: sky.DNSAddr, west: skyWest.DNSAddr})
	})
	t.Run("kubesky's identity writes only the Services and EndpointSlices it manages", func(t *testing.T) {
		testKubeskyWritesOnlyItsOwn(t, east)
	})
	t.Run("a malformed export in etcd is skipped and logged", func(t *testing.T) {
		broker.Ctl("put", "/clusterset/exports/rogue/shop/db", `{"type":"Headless","endpoints":[{"hostname":"x","addresses":["10.9.9.9"]}]}`)
		sky.Process.WaitForLog(`malformed clusterset record skipped`, 10*time.Second)
		digWithin(t, sky.DNSAddr, "db.shop.svc.clusterset.local.", "A", dns.RcodeSuccess, "10.1.0.5", "10.2.0.9")
	})
	t.Run("a stopped cluster's exports expire with its lease", func(t *testing.T) {
		west.kube2sky.Process.Stop()
		stopped := time.Now()
		digWithin(t, sky.DNSAddr, "10-2-0-9.west.db.shop.svc.clusterset.local.", "A", dns.RcodeNameError)
		digWithin(t, sky.DNSAddr, "db.shop.svc.clusterset.local.", "A", dns.RcodeSuccess, "10.1.0.5")
		answered := time.Since(stopped)
		importWithin(t, east, "shop", "db", "Headless", []string{"sql/TCP/5432"}, []string{"east"})
		mcsSlicesWithin(t, east, "shop", "db", map[string][]string{"east": {"10.1.0.5"}})
		figure(t, "lost cluster: kube2sky stopped -> its endpoints gone from the answers %s, from east's ServiceImport and EndpointSlices %s (lease TTL %s)",
			answered.Round(100*time.Millisecond), time.Since(stopped).Round(100*time.Millisecond), clustersetLease)
	})
	t.Run("a restarted cluster's exports come back", func(t *testing.T) {
		west.kube2sky.Process.Start()
		digWithin(t, sky.DNSAddr, "db.shop.svc.clusterset.local.", "A", dns.RcodeSuccess, "10.1.0.5", "10.2.0.9")
		importWithin(t, east, "shop", "db", "Headless", []string{"sql/TCP/5432"}, []string{"east", "west"})
		mcsSlicesWithin(t, east, "shop", "db", map[string][]string{"east": {"10.1.0.5"}, "west": {"10.2.0.9"}})
	})
}

// startMCSCluster starts a cluster with its own storage, installs the MCS
// CRDs from the mcs-api module and starts its kube2sky writing records to
// the etcd at records (and the clusterset there too, unless kube2skyArgs
// say otherwise), as kubesky's service account with deploy/'s RBAC and the
// clusterset's.
func startMCSCluster(t *testing.T, id, records string, kube2skyArgs ...string) *mcsCluster {
	t.Helper()
	c := &mcsCluster{id: id, api: harness.StartAPIServer(t, harness.StartEtcd(t).Endpoint)}
	apply, err := newApplier(c.api.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, def := range [][]byte{crd.ServiceExportCRD, crd.ServiceImportCRD} {
		if err := apply.applyYAML(t.Context(), string(def), ""); err != nil {
			t.Fatalf("installing the MCS CRDs in %s: %v", id, err)
		}
	}
	if c.mcs, err = mcsclient.NewForConfig(c.api.Config); err != nil {
		t.Fatal(err)
	}
	polltest.Within(t, 30*time.Second, id+": the ServiceExport CRD served", func() error {
		_, err := c.mcs.MulticlusterV1beta1().ServiceExports("default").List(t.Context(), metav1.ListOptions{})
		return err
	})
	createNamespace(t, c.api.Client, "shop")
	kubeconfig := asKubesky(t, c.api)
	kubeskyCfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if c.kubesky, err = kubernetes.NewForConfig(kubeskyCfg); err != nil {
		t.Fatal(err)
	}
	c.kube2sky = harness.StartKube2Sky(t, kubeconfig, records, append([]string{"--prefix=/skydns-" + id,
		"--clusterset-prefix=/clusterset", "--cluster-id=" + id, "--clusterset-lease-ttl=" + clustersetLease.String(), "--clusterset-resync-period=2s"},
		kube2skyArgs...)...)
	return c
}

func mcsHeadlessService(name string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name},
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{{Name: "sql", Protocol: corev1.ProtocolTCP, Port: 5432}}}}
}

func mcsEndpointSlice(service, ip string, hostname *string) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "shop", Name: service + "-1", Labels: map[string]string{discoveryv1.LabelServiceName: service}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{ip}, Hostname: hostname, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("sql"), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To[int32](5432)}},
	}
}

// exportService creates svc (and slice, unless nil) and its ServiceExport.
func exportService(t *testing.T, c *mcsCluster, svc *corev1.Service, slice *discoveryv1.EndpointSlice) {
	t.Helper()
	if _, err := c.api.Client.CoreV1().Services(svc.Namespace).Create(t.Context(), svc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("%s: creating Service %s: %v", c.id, svc.Name, err)
	}
	if slice != nil {
		slice.Namespace = svc.Namespace
		if _, err := c.api.Client.DiscoveryV1().EndpointSlices(svc.Namespace).Create(t.Context(), slice, metav1.CreateOptions{}); err != nil {
			t.Fatalf("%s: creating EndpointSlice: %v", c.id, err)
		}
	}
	createServiceExport(t, c, svc.Namespace, svc.Name)
}

func createServiceExport(t *testing.T, c *mcsCluster, ns, name string) {
	t.Helper()
	se := &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if _, err := c.mcs.MulticlusterV1beta1().ServiceExports(ns).Create(t.Context(), se, metav1.CreateOptions{}); err != nil {
		t.Fatalf("%s: creating ServiceExport %s: %v", c.id, name, err)
	}
}

// conditionWithin polls the ServiceExport until it has the condition.
func conditionWithin(t *testing.T, c *mcsCluster, name string, ct mcsv1beta1.ServiceExportConditionType, status metav1.ConditionStatus, reason mcsv1beta1.ServiceExportConditionReason) {
	t.Helper()
	polltest.Within(t, 15*time.Second, fmt.Sprintf("%s: ServiceExport %s %s=%s (%s)", c.id, name, ct, status, reason), func() error {
		se, err := c.mcs.MulticlusterV1beta1().ServiceExports("shop").Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		got := meta.FindStatusCondition(se.Status.Conditions, string(ct))
		if got == nil || got.Status != status || got.Reason != string(reason) {
			return fmt.Errorf("conditions %+v", se.Status.Conditions)
		}
		return nil
	})
}

// digWithin runs dig until it answers rcode with exactly the given record
// data (in any order), within the lease TTL and a margin.
func digWithin(t *testing.T, addr, qname, qtype string, rcode int, want ...string) {
	t.Helper()
	slices.Sort(want)
	polltest.Within(t, clustersetLease+10*time.Second, "dig "+qname+" "+qtype, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r, err := harness.Dig(ctx, addr, "udp", qname, qtype)
		if err != nil {
			return err
		}
		var got []string
		for _, rr := range r.Answer {
			got = append(got, strings.TrimPrefix(rr.String(), rr.Header().String()))
		}
		slices.Sort(got)
		if r.Rcode != rcode || !slices.Equal(got, want) {
			return fmt.Errorf("%s %v, want %s %v", dns.RcodeToString[r.Rcode], got, dns.RcodeToString[rcode], want)
		}
		return nil
	})
}
