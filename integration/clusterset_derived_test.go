package integration

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/kubesky/kubesky/integration/harness"
	"github.com/kubesky/kubesky/internal/polltest"
)

// testDerivedServices exports a ClusterIP Service from east and checks, in
// both clusters, the derived Service, the ServiceImport's IPs, the MCS
// EndpointSlices kube-proxy would route it to and each skydns's answer
// (its own cluster's IP); then that a derived Service deleted by hand
// comes back, and that the export's withdrawal removes it all.
func testDerivedServices(t *testing.T, broker *harness.Etcd, east, west *mcsCluster, dnsAddr map[*mcsCluster]string) {
	api := mcsHeadlessService("api")
	api.Spec.ClusterIP = ""
	exportService(t, east, api, mcsEndpointSlice("api", "10.1.0.9", nil))
	for _, c := range []*mcsCluster{east, west} {
		derived := derivedWithin(t, c, "api", "")
		importIPsWithin(t, c, "api", derived.Spec.ClusterIPs...)
		digWithin(t, dnsAddr[c], "api.shop.svc.clusterset.local.", "A", dns.RcodeSuccess, derived.Spec.ClusterIP)
		digWithin(t, dnsAddr[c], "_sql._tcp.api.shop.svc.clusterset.local.", "SRV", dns.RcodeSuccess, "0 1 5432 api.shop.svc.clusterset.local.")
		routedSlicesWithin(t, c, derived.Name, "10.1.0.9")
		if got := broker.Ctl("get", "--print-value-only", "/clusterset/imports/"+c.id+"/shop/api"); !strings.Contains(got, derived.Spec.ClusterIP) {
			t.Errorf("%s: etcd holds %q for its import, want its derived IP %s", c.id, got, derived.Spec.ClusterIP)
		}
	}
	t.Run("a derived Service deleted by hand comes back with an IP that is answered", func(t *testing.T) {
		old := derivedWithin(t, west, "api", "")
		if err := west.api.Client.CoreV1().Services("shop").Delete(t.Context(), old.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		back := derivedWithin(t, west, "api", string(old.UID))
		importIPsWithin(t, west, "api", back.Spec.ClusterIPs...)
		digWithin(t, dnsAddr[west], "api.shop.svc.clusterset.local.", "A", dns.RcodeSuccess, back.Spec.ClusterIP)
	})
	t.Run("the export withdrawn: ServiceImport, derived Service, slices and name gone", func(t *testing.T) {
		deleteServiceExport(t, east, "api")
		for _, c := range []*mcsCluster{east, west} {
			noImport(t, c, "shop", "api")
			noDerived(t, c, "api")
			mcsSlicesWithin(t, c, "shop", "api", map[string][]string{})
			digWithin(t, dnsAddr[c], "api.shop.svc.clusterset.local.", "A", dns.RcodeNameError)
			if got := broker.Ctl("get", "--prefix", "--keys-only", "/clusterset/imports/"+c.id+"/shop/api"); strings.TrimSpace(got) != "" {
				t.Errorf("%s: etcd still holds %q", c.id, got)
			}
		}
	})
}

// derivedWithin polls until c has kubesky's derived Service of shop/name,
// with its IPs allocated and a UID other than not, and checks it is a
// selectorless ClusterIP Service owned by the ServiceImport.
func derivedWithin(t *testing.T, c *mcsCluster, name, not string) *corev1.Service {
	t.Helper()
	var derived *corev1.Service
	polltest.Every(t, 15*time.Second, 20*time.Millisecond, fmt.Sprintf("%s: derived Service of %s", c.id, name), func() error {
		list, err := derivedOf(c, name)
		if err != nil || len(list) != 1 || string(list[0].UID) == not || len(list[0].Spec.ClusterIPs) == 0 {
			return fmt.Errorf("%d derived Services (%v)", len(list), err)
		}
		derived = &list[0]
		return nil
	})
	si, err := c.mcs.MulticlusterV1alpha1().ServiceImports("shop").Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	owners := derived.OwnerReferences
	if !strings.HasPrefix(derived.Name, "derived-") || derived.Spec.Type != corev1.ServiceTypeClusterIP || len(derived.Spec.Selector) != 0 ||
		len(owners) != 1 || owners[0].UID != si.UID || owners[0].Kind != "ServiceImport" {
		t.Errorf("%s: derived Service %s type %s selector %v owners %v, want a selectorless ClusterIP derived-* owned by ServiceImport %s",
			c.id, derived.Name, derived.Spec.Type, derived.Spec.Selector, owners, si.UID)
	}
	return derived
}

func derivedOf(c *mcsCluster, name string) ([]corev1.Service, error) {
	list, err := c.api.Client.CoreV1().Services("shop").List(context.Background(), metav1.ListOptions{
		LabelSelector: "app.kubernetes.io/managed-by=kubesky," + mcsv1alpha1.LabelServiceName + "=" + name})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// noDerived polls until c has no derived Service of shop/name.
func noDerived(t *testing.T, c *mcsCluster, name string) {
	t.Helper()
	polltest.Every(t, 15*time.Second, 20*time.Millisecond, fmt.Sprintf("%s: no derived Service of %s", c.id, name), func() error {
		list, err := derivedOf(c, name)
		if err != nil || len(list) > 0 {
			return fmt.Errorf("%d derived Services (%v)", len(list), err)
		}
		return nil
	})
}

// routedSlicesWithin polls until the EndpointSlices kube-proxy reads for
// the derived Service (kubernetes.io/service-name) are kubesky's and hold
// exactly addrs.
func routedSlicesWithin(t *testing.T, c *mcsCluster, derived string, addrs ...string) {
	t.Helper()
	polltest.Every(t, 15*time.Second, 20*time.Millisecond, fmt.Sprintf("%s: EndpointSlices of %s", c.id, derived), func() error {
		list, err := c.api.Client.DiscoveryV1().EndpointSlices("shop").List(context.Background(),
			metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + derived})
		if err != nil {
			return err
		}
		var got []string
		for _, s := range list.Items {
			if s.Labels[discoveryv1.LabelManagedBy] != "kubesky" {
				return fmt.Errorf("slice %s labelled %v", s.Name, s.Labels)
			}
			for _, ep := range s.Endpoints {
				got = append(got, ep.Addresses...)
			}
		}
		if !slices.Equal(got, addrs) {
			return fmt.Errorf("slices hold %v", got)
		}
		return nil
	})
}

// testKubeskyWritesOnlyItsOwn tries, as kubesky's service account, writes
// its RBAC or its admission policy must refuse (dry-run, so a write let
// through changes nothing), and one it must allow.
func testKubeskyWritesOnlyItsOwn(t *testing.T, c *mcsCluster) {
	ctx, dry := t.Context(), []string{metav1.DryRunAll}
	services, endpointSlices := c.kubesky.CoreV1().Services("shop"), c.kubesky.DiscoveryV1().EndpointSlices("shop")
	ours := map[string]string{"app.kubernetes.io/managed-by": "kubesky"}
	svc := func(name string, labels, selector map[string]string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Spec: corev1.ServiceSpec{Selector: selector, Ports: []corev1.ServicePort{{Port: 80}}}}
	}
	// each refusal names the rule that refused it: the policy's message or RBAC's
	refused := map[string]struct {
		says string
		try  func() error
	}{
		"a derived-* Service with a selector": {"selectorless ClusterIP Services named derived-*", func() error {
			_, err := services.Create(ctx, svc("derived-rogue", ours, map[string]string{"app": "x"}), metav1.CreateOptions{DryRun: dry})
			return err
		}},
		"a Service without kubesky's label": {"only the Services and EndpointSlices it manages", func() error {
			_, err := services.Create(ctx, svc("derived-unlabelled", nil, nil), metav1.CreateOptions{DryRun: dry})
			return err
		}},
		"a user's Service taken over": {"only the Services and EndpointSlices it manages", func() error {
			db, err := c.api.Client.CoreV1().Services("shop").Get(ctx, "db", metav1.GetOptions{})
			if err != nil {
				return err
			}
			db.Labels = maps.Clone(ours)
			_, err = services.Update(ctx, db, metav1.UpdateOptions{DryRun: dry})
			return err
		}},
		"a user's Service deleted": {"only the Services and EndpointSlices it manages", func() error {
			return services.Delete(ctx, "db", metav1.DeleteOptions{DryRun: dry})
		}},
		"a user's EndpointSlice deleted": {"only the Services and EndpointSlices it manages", func() error {
			return endpointSlices.Delete(ctx, "db-1", metav1.DeleteOptions{DryRun: dry})
		}},
		"a Secret read": {`cannot list resource "secrets"`, func() error {
			_, err := c.kubesky.CoreV1().Secrets("shop").List(ctx, metav1.ListOptions{})
			return err
		}},
	}
	for what, r := range refused {
		polltest.Within(t, 15*time.Second, c.id+": kubesky refused "+what, func() error {
			err := r.try()
			if (!apierrors.IsForbidden(err) && !apierrors.IsInvalid(err)) || !strings.Contains(err.Error(), r.says) {
				return fmt.Errorf("allowed or refused for another reason: %v", err)
			}
			return nil
		})
	}
	if _, err := services.Create(ctx, svc("derived-allowed", ours, nil), metav1.CreateOptions{DryRun: dry}); err != nil {
		t.Errorf("%s: kubesky's own kind of Service refused: %v", c.id, err)
	}
}

// clusterSetIPSamples is how many ClusterSetIP exports
// measureClusterSetIPLatency times.
const clusterSetIPSamples = 10

// measureClusterSetIPLatency exports ClusterIP Services from east one at a
// time and times, from the ServiceExport's creation, every cluster's skydns
// answering the name with that cluster's derived Service IP.
func measureClusterSetIPLatency(t *testing.T, east *mcsCluster, dnsAddr map[*mcsCluster]string) {
	var answered []time.Duration
	for i := range clusterSetIPSamples {
		name := fmt.Sprintf("vip-%d", i)
		if _, err := east.api.Client.CoreV1().Services("shop").Create(t.Context(), clusterIPService(name, corev1.ServicePort{Name: "sql", Protocol: corev1.ProtocolTCP, Port: 5432}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := east.api.Client.DiscoveryV1().EndpointSlices("shop").Create(t.Context(), mcsEndpointSlice(name, fmt.Sprintf("10.1.2.%d", i+1), nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		createServiceExport(t, east, "shop", name)
		polltest.Every(t, 15*time.Second, 10*time.Millisecond, "every cluster answers its derived IP of "+name, func() error {
			for c, addr := range dnsAddr {
				list, err := derivedOf(c, name)
				if err != nil || len(list) != 1 || list[0].Spec.ClusterIP == "" {
					return fmt.Errorf("%s: %d derived Services (%v)", c.id, len(list), err)
				}
				if !allAnswer([]string{addr}, name+".shop.svc.clusterset.local.", list[0].Spec.ClusterIP) {
					return fmt.Errorf("%s: %s not answered yet", c.id, list[0].Spec.ClusterIP)
				}
			}
			return nil
		})
		answered = append(answered, time.Since(start))
	}
	slices.Sort(answered)
	figure(t, "ClusterSetIP export created -> every cluster's skydns answers its own derived Service IP, %d exports: p50 %v, p99 %v, max %v",
		clusterSetIPSamples, percentile(answered, 50), percentile(answered, 99), percentile(answered, 100))
}

// testDualStackDerived exports a dual-stack Service from west and checks
// that east's derived Service has an IP per family, in the export's order,
// and that east's skydns answers A and AAAA with them.
func testDualStackDerived(t *testing.T, east, west *mcsCluster, eastDNS string) {
	dual := clusterIPService("dual", corev1.ServicePort{Name: "sql", Protocol: corev1.ProtocolTCP, Port: 5432})
	dual.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicyRequireDualStack)
	dual.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol, corev1.IPv4Protocol}
	exportService(t, west, dual, mcsEndpointSlice("dual", "10.2.0.30", nil))
	derived := derivedWithin(t, east, "dual", "")
	if fams := derived.Spec.IPFamilies; len(derived.Spec.ClusterIPs) != 2 || !slices.Equal(fams, dual.Spec.IPFamilies) {
		t.Fatalf("east's derived Service has IPs %v of families %v, want one per family, IPv6 first", derived.Spec.ClusterIPs, fams)
	}
	importIPsWithin(t, east, "dual", derived.Spec.ClusterIPs...)
	digWithin(t, eastDNS, "dual.shop.svc.clusterset.local.", "AAAA", dns.RcodeSuccess, derived.Spec.ClusterIPs[0])
	digWithin(t, eastDNS, "dual.shop.svc.clusterset.local.", "A", dns.RcodeSuccess, derived.Spec.ClusterIPs[1])
}
