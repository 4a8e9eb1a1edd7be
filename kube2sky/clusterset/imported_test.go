package clusterset

import (
	"net/netip"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/kubesky/kubesky/contract"
	cs "github.com/kubesky/kubesky/contract/clusterset"
)

var web = cs.ServiceName{Namespace: "shop", Name: "web"}

// mergedWeb: web exported by east (oldest, ClientIP affinity, IPv4) and
// west (a second port, a dual-stack endpoint).
func mergedWeb() *cs.Service {
	http := cs.Port{Name: "http", Protocol: "TCP", Port: 80}
	v := cs.Merge(map[cs.ExportID]cs.Export{
		{Cluster: "east", ServiceName: web}: {Created: created, Type: cs.ClusterSetIP, Ports: []cs.Port{http},
			SessionAffinity: "ClientIP", AffinityTimeout: 60, IPFamilies: []string{"IPv4"},
			Endpoints: []cs.Endpoint{{Hostname: "e1", Addresses: []netip.Addr{netip.MustParseAddr("10.1.0.1")}}}},
		{Cluster: "west", ServiceName: web}: {Created: created.Add(time.Hour), Type: cs.ClusterSetIP,
			Ports: []cs.Port{http, {Name: "admin", Protocol: "TCP", Port: 9000}}, EndpointPorts: []cs.Port{{Name: "http", Protocol: "TCP", Port: 8080}},
			Endpoints: []cs.Endpoint{{Hostname: "w1", Addresses: []netip.Addr{netip.MustParseAddr("10.2.0.1"), netip.MustParseAddr("fd00::1")}}}},
	}, nil, 1)
	return v.Service(web)
}

func TestTheServiceImportTakesTheOldestExportAndThePortsUnion(t *testing.T) {
	si := desiredImport(web, mergedWeb(), nil)
	if si.Spec.Type != mcsv1alpha1.ClusterSetIP || len(si.Spec.Ports) != 2 || si.Spec.Ports[1].Name != "admin" {
		t.Errorf("spec %+v, want ClusterSetIP with ports http and admin", si.Spec)
	}
	if si.Spec.SessionAffinity != corev1.ServiceAffinityClientIP || *si.Spec.SessionAffinityConfig.ClientIP.TimeoutSeconds != 60 {
		t.Errorf("affinity %s %+v, want east's ClientIP 60s", si.Spec.SessionAffinity, si.Spec.SessionAffinityConfig)
	}
	if !slices.Equal(si.Spec.IPFamilies, []corev1.IPFamily{corev1.IPv4Protocol}) || si.Spec.IPs != nil {
		t.Errorf("ips %v families %v, want none and east's IPv4", si.Spec.IPs, si.Spec.IPFamilies)
	}
	if got := si.Status.Clusters; len(got) != 2 || got[0].Cluster != "east" || got[1].Cluster != "west" {
		t.Errorf("status.clusters %v, want east and west", got)
	}
	if si.Labels[managedByLabel] != ManagedBy {
		t.Errorf("labels %v", si.Labels)
	}
}

func TestTheClustersetIPsGiveTheFamiliesInTheirOrder(t *testing.T) {
	ips := []netip.Addr{netip.MustParseAddr("fd00:242::7"), netip.MustParseAddr("242.0.0.7")}
	si := desiredImport(web, mergedWeb(), ips)
	if !slices.Equal(si.Spec.IPs, []string{"fd00:242::7", "242.0.0.7"}) || !slices.Equal(si.Spec.IPFamilies, []corev1.IPFamily{corev1.IPv6Protocol, corev1.IPv4Protocol}) {
		t.Errorf("ips %v families %v", si.Spec.IPs, si.Spec.IPFamilies)
	}
}

func TestTheSlicesHoldEveryExportingClustersEndpointsOnePerFamily(t *testing.T) {
	got := desiredSlices(web, mergedWeb(), "derived-1")
	var names []string
	for _, s := range got {
		names = append(names, s.Name)
		src := s.Labels[mcsv1alpha1.LabelSourceCluster]
		if s.Labels[mcsv1alpha1.LabelServiceName] != "web" || s.Labels[discoveryv1.LabelManagedBy] != ManagedBy || s.Labels[discoveryv1.LabelServiceName] != "derived-1" {
			t.Errorf("slice %s labels %v, want web's, kubesky's and the derived Service's", s.Name, s.Labels)
		}
		if src == "west" && (len(s.Ports) != 1 || *s.Ports[0].Port != 8080 || len(s.Endpoints) != 1 || *s.Endpoints[0].Hostname != "w1") {
			t.Errorf("slice %s ports %v endpoints %v, want west's target port 8080 and w1", s.Name, s.Ports, s.Endpoints)
		}
	}
	if !slices.Equal(names, []string{"web-east-ipv4-0", "web-west-ipv4-0", "web-west-ipv6-0"}) {
		t.Errorf("slices %v, want east's IPv4 one and west's IPv4 and IPv6 ones", names)
	}
	for _, s := range desiredSlices(web, mergedWeb(), "") {
		if _, ok := s.Labels[discoveryv1.LabelServiceName]; ok {
			t.Errorf("slice %s of an import without a derived Service is labelled %v", s.Name, s.Labels)
		}
	}
}

func TestMoreThanAThousandEndpointsSpreadOverSlices(t *testing.T) {
	svc := mergedWeb()
	svc.Members = svc.Members[1:]
	west := &svc.Members[0]
	west.Endpoints = nil
	for i := range 1500 {
		addr := netip.AddrFrom4([4]byte{10, 2, byte(i / 256), byte(i % 256)})
		west.Endpoints = append(west.Endpoints, cs.Endpoint{Hostname: cs.DashedName(addr), Addresses: []netip.Addr{addr}})
	}
	got := desiredSlices(web, svc, "")
	if len(got) != 2 || len(got[0].Endpoints) != 1000 || len(got[1].Endpoints) != 500 || got[1].Name != "web-west-ipv4-1" {
		t.Errorf("%d slices, want 1000 and 500 endpoints", len(got))
	}
}

func TestAnUpdateQueuesOnlyTheNamesWhoseMergedServiceChanged(t *testing.T) {
	im := &importer{store: cs.NewStore(cs.DefaultPrefix, "east", nil)}
	export := func(port int) []byte {
		return cs.Export{Created: created, Type: cs.Headless, Ports: []cs.Port{{Protocol: "TCP", Port: port}}}.Encode()
	}
	key := func(name string) string {
		return cs.ExportKey(cs.DefaultPrefix, cs.ExportID{Cluster: "west", ServiceName: cs.ServiceName{Namespace: "shop", Name: name}})
	}
	names := func(u contract.Update) []string {
		var out []string
		for _, n := range im.apply(u) {
			out = append(out, n.Name)
		}
		slices.Sort(out)
		return out
	}
	steps := []struct {
		u    contract.Update
		want []string
	}{
		{contract.Update{Revision: 1, Full: true, Events: []contract.Event{{Type: contract.Put, Key: key("a"), Value: export(1)}, {Type: contract.Put, Key: key("b"), Value: export(1)}}}, []string{"a", "b"}},
		{contract.Update{Revision: 2, Events: []contract.Event{{Type: contract.Put, Key: key("a"), Value: export(2)}}}, []string{"a"}},
		{contract.Update{Revision: 3, Events: []contract.Event{{Type: contract.Put, Key: key("a"), Value: export(2)}}}, nil},
		{contract.Update{Revision: 4, Events: []contract.Event{{Type: contract.Delete, Key: key("b")}}}, []string{"b"}},
	}
	for i, s := range steps {
		if got := names(s.u); !slices.Equal(got, s.want) {
			t.Errorf("update %d queued %v, want %v", i+1, got, s.want)
		}
	}
}
