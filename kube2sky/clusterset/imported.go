package clusterset

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	cs "github.com/kubesky/kubesky/contract/clusterset"
)

// ManagedBy names kubesky on what its import side writes: the value of
// app.kubernetes.io/managed-by on ServiceImports and of
// endpointslice.kubernetes.io/managed-by on MCS EndpointSlices.
const ManagedBy = "kubesky"

// managedByLabel marks a ServiceImport as kubesky's.
const managedByLabel = "app.kubernetes.io/managed-by"

// maxSliceEndpoints is the API server's limit of endpoints in one
// EndpointSlice.
const maxSliceEndpoints = 1000

// desiredImport is the ServiceImport of name in the merged view, with
// this cluster's clusterset IPs ips (none for a Headless one): the oldest
// export decides the type, the session affinity, the traffic policy and
// distribution and the IP families (those of the ips when it has any); the
// ports are the view's union.
func desiredImport(name cs.ServiceName, svc *cs.Service, ips []netip.Addr) *mcsv1alpha1.ServiceImport {
	oldest := svc.Members[0]
	si := &mcsv1alpha1.ServiceImport{
		ObjectMeta: metav1.ObjectMeta{Namespace: name.Namespace, Name: name.Name, Labels: map[string]string{managedByLabel: ManagedBy}},
		Spec: mcsv1alpha1.ServiceImportSpec{Type: mcsv1alpha1.ServiceImportType(svc.Type), Ports: importPorts(svc.Ports),
			SessionAffinity: corev1.ServiceAffinityNone, IPFamilies: families(oldest.IPFamilies)},
	}
	if svc.Type == cs.ClusterSetIP {
		setIPs(&si.Spec, ips)
		setTraffic(&si.Spec, oldest.Export)
	}
	if svc.Type == cs.ClusterSetIP && oldest.SessionAffinity == string(corev1.ServiceAffinityClientIP) {
		si.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
		if oldest.AffinityTimeout > 0 {
			si.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr.To(int32(oldest.AffinityTimeout))}}
		}
	}
	for _, m := range svc.Members {
		si.Status.Clusters = append(si.Status.Clusters, mcsv1alpha1.ClusterStatus{Cluster: m.Cluster})
	}
	slices.SortFunc(si.Status.Clusters, func(a, b mcsv1alpha1.ClusterStatus) int { return cmp.Compare(a.Cluster, b.Cluster) })
	return si
}

// setIPs sets the clusterset IPs and, when there are any, the IP families
// in their order, as the MCS API asks.
func setIPs(spec *mcsv1alpha1.ServiceImportSpec, ips []netip.Addr) {
	spec.IPs = nil
	if len(ips) > 0 {
		spec.IPFamilies = nil
	}
	for _, ip := range ips {
		spec.IPs = append(spec.IPs, ip.String())
		spec.IPFamilies = append(spec.IPFamilies, familyOf(ip))
	}
}

// setTraffic sets the internal traffic policy and the traffic
// distribution of e, when it has them.
func setTraffic(spec *mcsv1alpha1.ServiceImportSpec, e cs.Export) {
	if e.InternalTrafficPolicy != "" {
		spec.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicy(e.InternalTrafficPolicy))
	}
	if e.TrafficDistribution != "" {
		spec.TrafficDistribution = ptr.To(e.TrafficDistribution)
	}
}

func importPorts(ports []cs.Port) []mcsv1alpha1.ServicePort {
	out := []mcsv1alpha1.ServicePort{}
	for _, p := range ports {
		out = append(out, mcsv1alpha1.ServicePort{Name: p.Name, Protocol: corev1.Protocol(p.Protocol), Port: int32(p.Port)})
	}
	return out
}

func families(names []string) []corev1.IPFamily {
	var out []corev1.IPFamily
	for _, f := range names {
		out = append(out, corev1.IPFamily(f))
	}
	return out
}

func familyOf(ip netip.Addr) corev1.IPFamily {
	if ip.Unmap().Is4() {
		return corev1.IPv4Protocol
	}
	return corev1.IPv6Protocol
}

// desiredSlices are the MCS EndpointSlices of name in this cluster: one
// per exporting cluster (this one included) and address family (more past
// 1000 endpoints), holding that cluster's ready endpoints and its endpoint
// ports. derived names the Service derived from a ClusterSetIP import ("":
// none), whose endpoints they are.
func desiredSlices(name cs.ServiceName, svc *cs.Service, derived string) []*discoveryv1.EndpointSlice {
	var out []*discoveryv1.EndpointSlice
	for _, m := range svc.Members {
		for _, fam := range []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol} {
			eps := endpointsOf(m.Endpoints, fam)
			for i := 0; i < len(eps); i += maxSliceEndpoints {
				s := newSlice(name, m.Cluster, derived, fam, i/maxSliceEndpoints, m.EndpointPorts)
				s.Endpoints = eps[i:min(i+maxSliceEndpoints, len(eps))]
				out = append(out, s)
			}
		}
	}
	return out
}

func newSlice(name cs.ServiceName, cluster, derived string, fam corev1.IPFamily, n int, ports []cs.Port) *discoveryv1.EndpointSlice {
	addressType := discoveryv1.AddressTypeIPv4
	if fam == corev1.IPv6Protocol {
		addressType = discoveryv1.AddressTypeIPv6
	}
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: name.Namespace, Name: fmt.Sprintf("%s-%s-%s-%d", name.Name, cluster, addressTypeName(addressType), n),
			Labels: sliceLabels(name.Name, cluster, derived)},
		AddressType: addressType,
		Ports:       slicePorts(ports),
	}
}

func addressTypeName(t discoveryv1.AddressType) string {
	if t == discoveryv1.AddressTypeIPv6 {
		return "ipv6"
	}
	return "ipv4"
}

// sliceLabels are an MCS EndpointSlice's labels; kubernetes.io/service-name
// only names a derived Service, never the local Service of the same name.
func sliceLabels(service, cluster, derived string) map[string]string {
	l := map[string]string{
		mcsv1alpha1.LabelServiceName:   service,
		mcsv1alpha1.LabelSourceCluster: cluster,
		discoveryv1.LabelManagedBy:     ManagedBy,
	}
	if derived != "" {
		l[discoveryv1.LabelServiceName] = derived
	}
	return l
}

func slicePorts(ports []cs.Port) []discoveryv1.EndpointPort {
	out := []discoveryv1.EndpointPort{}
	for _, p := range ports {
		out = append(out, discoveryv1.EndpointPort{Name: ptr.To(p.Name), Protocol: ptr.To(corev1.Protocol(p.Protocol)), Port: ptr.To(int32(p.Port))})
	}
	return out
}

// endpointsOf are the endpoints with an address of family fam, ready, each
// named by its hostname.
func endpointsOf(eps []cs.Endpoint, fam corev1.IPFamily) []discoveryv1.Endpoint {
	var out []discoveryv1.Endpoint
	for _, ep := range eps {
		var addrs []string
		for _, a := range ep.Addresses {
			if familyOf(a) == fam {
				addrs = append(addrs, a.String())
			}
		}
		if len(addrs) > 0 {
			out = append(out, discoveryv1.Endpoint{Addresses: addrs, Hostname: ptr.To(ep.Hostname),
				Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}})
		}
	}
	return out
}
