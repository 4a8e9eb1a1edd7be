package integration

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/kubesky/kubesky/deploy"
	"github.com/kubesky/kubesky/integration/harness"
	"github.com/kubesky/kubesky/internal/polltest"
)

// asKubesky applies deploy/'s RBAC objects and admission policies
// (deploy/kubernetes and deploy/optional) and returns a kubeconfig that
// impersonates kubesky's service account, so kube2sky runs with those
// grants and no more.
func asKubesky(t *testing.T, api *harness.APIServer) string {
	t.Helper()
	manifests, err := deploy.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	optional, err := deploy.Optional()
	if err != nil {
		t.Fatal(err)
	}
	var rbac []*unstructured.Unstructured
	for _, obj := range append(manifests, optional...) {
		if group := obj.GroupVersionKind().Group; obj.GetKind() == "ServiceAccount" || group == "rbac.authorization.k8s.io" || group == "admissionregistration.k8s.io" {
			rbac = append(rbac, obj)
		}
	}
	applier, err := deploy.NewApplier(api.Config, "clusterset-test")
	if err != nil {
		t.Fatal(err)
	}
	if err := applier.Apply(t.Context(), rbac); err != nil {
		t.Fatalf("applying deploy/'s RBAC: %v", err)
	}
	cfg, err := clientcmd.LoadFromFile(api.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, user := range cfg.AuthInfos {
		user.Impersonate = "system:serviceaccount:kube-system:kubesky"
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// importWithin polls c's ServiceImport ns/name (v1alpha1) until it has the
// type, the ports ("name/protocol/port", any order) and status.clusters.
func importWithin(t *testing.T, c *mcsCluster, ns, name, typ string, ports, clusters []string) {
	t.Helper()
	slices.Sort(ports)
	polltest.Every(t, 15*time.Second, 20*time.Millisecond, fmt.Sprintf("%s: ServiceImport %s/%s %s %v from %v", c.id, ns, name, typ, ports, clusters), func() error {
		si, err := c.mcs.MulticlusterV1alpha1().ServiceImports(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		var gotPorts, gotClusters []string
		for _, p := range si.Spec.Ports {
			gotPorts = append(gotPorts, fmt.Sprintf("%s/%s/%d", p.Name, p.Protocol, p.Port))
		}
		slices.Sort(gotPorts)
		for _, cl := range si.Status.Clusters {
			gotClusters = append(gotClusters, cl.Cluster)
		}
		if string(si.Spec.Type) != typ || !slices.Equal(gotPorts, ports) || !slices.Equal(gotClusters, clusters) {
			return fmt.Errorf("%s %v from %v", si.Spec.Type, gotPorts, gotClusters)
		}
		return nil
	})
}

// importIPsWithin polls until c's ServiceImport shop/name has the ips.
func importIPsWithin(t *testing.T, c *mcsCluster, name string, ips ...string) {
	t.Helper()
	polltest.Every(t, 15*time.Second, 20*time.Millisecond, fmt.Sprintf("%s: ServiceImport %s ips %v", c.id, name, ips), func() error {
		si, err := c.mcs.MulticlusterV1alpha1().ServiceImports("shop").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !slices.Equal(si.Spec.IPs, ips) {
			return fmt.Errorf("ips %v families %v", si.Spec.IPs, si.Spec.IPFamilies)
		}
		return nil
	})
}

// noImport polls until c has no ServiceImport ns/name.
func noImport(t *testing.T, c *mcsCluster, ns, name string) {
	t.Helper()
	polltest.Every(t, 15*time.Second, 20*time.Millisecond, fmt.Sprintf("%s: no ServiceImport %s/%s", c.id, ns, name), func() error {
		_, err := c.mcs.MulticlusterV1alpha1().ServiceImports(ns).Get(context.Background(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there (%v)", err)
	})
}

// mcsSlicesWithin polls until c's MCS EndpointSlices of ns/name hold, per
// source cluster, exactly the given addresses; kubernetes.io/service-name
// may only name a derived Service.
func mcsSlicesWithin(t *testing.T, c *mcsCluster, ns, name string, want map[string][]string) {
	t.Helper()
	polltest.Every(t, 15*time.Second, 20*time.Millisecond, fmt.Sprintf("%s: MCS EndpointSlices of %s/%s %v", c.id, ns, name, want), func() error {
		list, err := c.api.Client.DiscoveryV1().EndpointSlices(ns).List(context.Background(),
			metav1.ListOptions{LabelSelector: mcsv1alpha1.LabelServiceName + "=" + name})
		if err != nil {
			return err
		}
		got := map[string][]string{}
		for _, s := range list.Items {
			if local := s.Labels[discoveryv1.LabelServiceName]; s.Labels[discoveryv1.LabelManagedBy] != "kubesky" || (local != "" && !strings.HasPrefix(local, "derived-")) {
				return fmt.Errorf("slice %s labelled %v", s.Name, s.Labels)
			}
			src := s.Labels[mcsv1alpha1.LabelSourceCluster]
			for _, ep := range s.Endpoints {
				got[src] = append(got[src], ep.Addresses...)
			}
		}
		if !maps.EqualFunc(got, want, slices.Equal) {
			return fmt.Errorf("slices hold %v", got)
		}
		return nil
	})
}

// testImportLifecycle: a Service both clusters export with different
// ports gets the union; it stays while one export does, and goes from
// both clusters with the last one.
func testImportLifecycle(t *testing.T, east, west *mcsCluster) {
	http := corev1.ServicePort{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}
	admin := corev1.ServicePort{Name: "admin", Protocol: corev1.ProtocolTCP, Port: 9000}
	exportService(t, east, clusterIPService("ports", http), mcsEndpointSlice("ports", "10.1.0.21", nil))
	exportService(t, west, clusterIPService("ports", http, admin), mcsEndpointSlice("ports", "10.2.0.21", nil))
	both := []string{"admin/TCP/9000", "http/TCP/80"}
	for _, c := range []*mcsCluster{east, west} {
		importWithin(t, c, "shop", "ports", "ClusterSetIP", both, []string{"east", "west"})
	}
	mcsSlicesWithin(t, east, "shop", "ports", map[string][]string{"east": {"10.1.0.21"}, "west": {"10.2.0.21"}})

	deleteServiceExport(t, east, "ports")
	for _, c := range []*mcsCluster{east, west} {
		importWithin(t, c, "shop", "ports", "ClusterSetIP", both, []string{"west"})
	}
	mcsSlicesWithin(t, west, "shop", "ports", map[string][]string{"west": {"10.2.0.21"}})

	deleteServiceExport(t, west, "ports")
	for _, c := range []*mcsCluster{east, west} {
		noImport(t, c, "shop", "ports")
	}
	mcsSlicesWithin(t, east, "shop", "ports", map[string][]string{})
}

func clusterIPService(name string, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name}, Spec: corev1.ServiceSpec{Ports: ports}}
}

func deleteServiceExport(t *testing.T, c *mcsCluster, name string) {
	t.Helper()
	if err := c.mcs.MulticlusterV1beta1().ServiceExports("shop").Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("%s: deleting ServiceExport %s: %v", c.id, name, err)
	}
}

// importSamples is how many exports measureImportLatency times.
const importSamples = 20

// measureImportLatency exports headless Services from east one at a time
// and times, from the ServiceExport's creation, the ServiceImport present
// in both clusters and both clusters' skydns answering the endpoint.
func measureImportLatency(t *testing.T, east, west *mcsCluster, dnsAddrs ...string) {
	var imported, answered []time.Duration
	for i := range importSamples {
		name, ip := fmt.Sprintf("lat-%d", i), fmt.Sprintf("10.1.1.%d", i+1)
		if _, err := east.api.Client.CoreV1().Services("shop").Create(t.Context(), mcsHeadlessService(name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := east.api.Client.DiscoveryV1().EndpointSlices("shop").Create(t.Context(), mcsEndpointSlice(name, ip, nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		createServiceExport(t, east, "shop", name)
		imp, ans := timeImport(t, []*mcsCluster{east, west}, name, ip, dnsAddrs, start)
		imported, answered = append(imported, imp), append(answered, ans)
	}
	slices.Sort(imported)
	slices.Sort(answered)
	figure(t, "export created -> ServiceImport in both clusters, %d exports: p50 %v, p99 %v, max %v", importSamples,
		percentile(imported, 50), percentile(imported, 99), percentile(imported, 100))
	figure(t, "export created -> both clusters' skydns answer it, %d exports: p50 %v, p99 %v, max %v", importSamples,
		percentile(answered, 50), percentile(answered, 99), percentile(answered, 100))
}

// timeImport polls until every cluster has the ServiceImport and every DNS
// server answers ip, and returns when each was first true, after start.
func timeImport(t *testing.T, clusters []*mcsCluster, name, ip string, dnsAddrs []string, start time.Time) (imported, answered time.Duration) {
	t.Helper()
	polltest.Every(t, 15*time.Second, 5*time.Millisecond, "ServiceImport and answers of "+name, func() error {
		if imported == 0 && importsPresent(clusters, name) {
			imported = time.Since(start)
		}
		if answered == 0 && allAnswer(dnsAddrs, name+".shop.svc.clusterset.local.", ip) {
			answered = time.Since(start)
		}
		if imported == 0 || answered == 0 {
			return fmt.Errorf("imported after %v, answered after %v", imported, answered)
		}
		return nil
	})
	return imported, answered
}

func importsPresent(clusters []*mcsCluster, name string) bool {
	for _, c := range clusters {
		if _, err := c.mcs.MulticlusterV1alpha1().ServiceImports("shop").Get(context.Background(), name, metav1.GetOptions{}); err != nil {
			return false
		}
	}
	return true
}

func allAnswer(addrs []string, qname, ip string) bool {
	for _, addr := range addrs {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		r, err := harness.Dig(ctx, addr, "udp", qname, "A")
		cancel()
		if err != nil || r.Rcode != dns.RcodeSuccess || !answerHolds(&dns.Msg{Answer: r.Answer}, ip) {
			return false
		}
	}
	return true
}

// figure logs a measured figure and prints it for bench/results.
func figure(t *testing.T, format string, args ...any) {
	t.Helper()
	line := "clusterset: " + strings.TrimSpace(fmt.Sprintf(format, args...))
	t.Log(line)
	fmt.Println(line)
}
