package clusterset

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	cs "github.com/kubesky/kubesky/contract/clusterset"
)

func TestTheDerivedServiceIsASelectorlessClusterIPServiceOwnedByTheImport(t *testing.T) {
	svc := mergedWeb()
	si := desiredImport(web, svc, nil)
	si.UID = types.UID("uid-1")
	d := desiredDerived(web, svc, si)
	if !strings.HasPrefix(d.Name, derivedPrefix) || len(validation.IsDNS1035Label(d.Name)) > 0 || d.Namespace != "shop" {
		t.Errorf("name %s/%s, want a DNS label beginning %s in shop", d.Namespace, d.Name, derivedPrefix)
	}
	if d.Spec.Type != corev1.ServiceTypeClusterIP || d.Spec.Selector != nil || d.Spec.ClusterIP != "" {
		t.Errorf("spec %+v, want a selectorless ClusterIP Service whose IP the API server picks", d.Spec)
	}
	if !isDerivedFor(d, web) || isDerivedFor(d, cs.ServiceName{Namespace: "shop", Name: "api"}) {
		t.Errorf("labels %v, want kubesky's and web's", d.Labels)
	}
	if len(d.OwnerReferences) != 1 || d.OwnerReferences[0].UID != "uid-1" || d.OwnerReferences[0].Kind != "ServiceImport" ||
		d.OwnerReferences[0].APIVersion != mcsv1alpha1.GroupVersion.String() || d.OwnerReferences[0].BlockOwnerDeletion != nil {
		t.Errorf("owner references %+v, want the ServiceImport's, not blocking its deletion (no finalizers right needed)", d.OwnerReferences)
	}
	var ports []string
	for _, p := range d.Spec.Ports {
		ports = append(ports, p.Name+"/"+string(p.Protocol)+"/"+p.TargetPort.String())
	}
	if !slices.Equal(ports, []string{"http/TCP/80", "admin/TCP/9000"}) {
		t.Errorf("ports %v, want the union, each targeting itself", ports)
	}
	if d.Spec.SessionAffinity != corev1.ServiceAffinityClientIP || *d.Spec.SessionAffinityConfig.ClientIP.TimeoutSeconds != 60 {
		t.Errorf("affinity %s %+v, want east's ClientIP 60s", d.Spec.SessionAffinity, d.Spec.SessionAffinityConfig)
	}
	if !slices.Equal(d.Spec.IPFamilies, []corev1.IPFamily{corev1.IPv4Protocol}) || *d.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack {
		t.Errorf("families %v %s, want east's IPv4, single-stack", d.Spec.IPFamilies, *d.Spec.IPFamilyPolicy)
	}
}

func TestTheDerivedServiceFollowsTheOldestExport(t *testing.T) {
	svc := mergedWeb()
	east := &svc.Members[0]
	east.IPFamilies = []string{"IPv6", "IPv4"}
	east.SessionAffinity, east.AffinityTimeout = "ClientIP", 0
	east.InternalTrafficPolicy, east.TrafficDistribution = "Local", "PreferClose"
	si := desiredImport(web, svc, nil)
	d := desiredDerived(web, svc, si)
	if *d.Spec.IPFamilyPolicy != corev1.IPFamilyPolicyPreferDualStack || d.Spec.IPFamilies[0] != corev1.IPv6Protocol {
		t.Errorf("families %v %s, want IPv6 first, dual-stack preferred", d.Spec.IPFamilies, *d.Spec.IPFamilyPolicy)
	}
	if *d.Spec.SessionAffinityConfig.ClientIP.TimeoutSeconds != defaultAffinityTimeout {
		t.Errorf("affinity timeout %d, want the API server's default, so an update compares equal", *d.Spec.SessionAffinityConfig.ClientIP.TimeoutSeconds)
	}
	if *d.Spec.InternalTrafficPolicy != corev1.ServiceInternalTrafficPolicyLocal || *d.Spec.TrafficDistribution != "PreferClose" {
		t.Errorf("traffic %v %v, want Local and PreferClose", *d.Spec.InternalTrafficPolicy, *d.Spec.TrafficDistribution)
	}
	if *si.Spec.InternalTrafficPolicy != corev1.ServiceInternalTrafficPolicyLocal || *si.Spec.TrafficDistribution != "PreferClose" {
		t.Errorf("the ServiceImport's traffic %v %v, want Local and PreferClose", si.Spec.InternalTrafficPolicy, si.Spec.TrafficDistribution)
	}
}

func TestAHeadlessImportCarriesNoTrafficPolicy(t *testing.T) {
	svc := mergedWeb()
	svc.Type = cs.Headless
	svc.Members[0].InternalTrafficPolicy = "Local"
	si := desiredImport(web, svc, []netip.Addr{netip.MustParseAddr("10.96.0.9")})
	if si.Spec.InternalTrafficPolicy != nil || si.Spec.IPs != nil {
		t.Errorf("spec %+v, want no traffic policy and no IPs on a Headless import", si.Spec)
	}
}

func TestADerivedServiceIsUpdatedOnlyInWhatKubeskySets(t *testing.T) {
	svc := mergedWeb()
	want := desiredDerived(web, svc, desiredImport(web, svc, nil))
	cur := want.DeepCopy()
	cur.Spec.ClusterIP, cur.Spec.ClusterIPs = "10.96.0.9", []string{"10.96.0.9"}
	cur.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol}
	if !sameDerived(cur, want) {
		t.Error("allocated IPs and families count as a difference")
	}
	cur.Spec.Ports = cur.Spec.Ports[:1]
	cur.Spec.TrafficDistribution = ptr.To("PreferClose")
	next := updatedDerived(cur, want)
	if !sameDerived(next, want) || next.Spec.ClusterIP != "10.96.0.9" {
		t.Errorf("updated %+v, want the ports and traffic of want and the IP kept", next.Spec)
	}
	if got := clusterIPs(next); len(got) != 1 || got[0].String() != "10.96.0.9" || clusterIPs(nil) != nil {
		t.Errorf("clusterIPs = %v", got)
	}
}
