package clusterset

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	cs "github.com/kubesky/kubesky/contract/clusterset"
)

// derivedPrefix begins the name of every Service kubesky derives from a
// ServiceImport.
const derivedPrefix = "derived-"

// defaultAffinityTimeout is the API server's default ClientIP session
// affinity timeout, in seconds.
const defaultAffinityTimeout = 10800

// derivedName is the name of the Service derived from the ServiceImport
// name, in its namespace: a DNS label whatever the import's name's length.
func derivedName(name cs.ServiceName) string {
	sum := sha256.Sum256([]byte(name.Namespace + "/" + name.Name))
	return derivedPrefix + hex.EncodeToString(sum[:8])
}

// desiredDerived is the Service that gives the ClusterSetIP import si of
// svc its clusterset IPs in this cluster: a selectorless ClusterIP Service
// owned by si (deleted with it), whose endpoints are kubesky's MCS
// EndpointSlices, labelled kubernetes.io/service-name with its name so
// kube-proxy routes its IPs to every exporting cluster. Its IP families
// are the oldest export's; the API server picks the IPs.
func desiredDerived(name cs.ServiceName, svc *cs.Service, si *mcsv1alpha1.ServiceImport) *corev1.Service {
	oldest := svc.Members[0]
	d := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: name.Namespace, Name: derivedName(name),
			Labels: map[string]string{managedByLabel: ManagedBy, mcsv1alpha1.LabelServiceName: name.Name},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: mcsv1alpha1.GroupVersion.String(), Kind: "ServiceImport",
				Name: si.Name, UID: si.UID}}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: derivedPorts(svc.Ports),
			SessionAffinity: corev1.ServiceAffinityNone, IPFamilyPolicy: ptr.To(corev1.IPFamilyPolicySingleStack),
			IPFamilies:            families(oldest.IPFamilies),
			InternalTrafficPolicy: ptr.To(corev1.ServiceInternalTrafficPolicyCluster)},
	}
	if len(oldest.IPFamilies) == 2 {
		d.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicyPreferDualStack)
	}
	if oldest.SessionAffinity == string(corev1.ServiceAffinityClientIP) {
		d.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
		timeout := int32(cmp.Or(oldest.AffinityTimeout, defaultAffinityTimeout))
		d.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: &timeout}}
	}
	if oldest.InternalTrafficPolicy != "" {
		d.Spec.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicy(oldest.InternalTrafficPolicy))
	}
	if oldest.TrafficDistribution != "" {
		d.Spec.TrafficDistribution = ptr.To(oldest.TrafficDistribution)
	}
	return d
}

// derivedPorts are the import's ports on the derived Service; each
// targets itself, as a selectorless Service's port does.
func derivedPorts(ports []cs.Port) []corev1.ServicePort {
	var out []corev1.ServicePort
	for _, p := range ports {
		out = append(out, corev1.ServicePort{Name: p.Name, Protocol: corev1.Protocol(p.Protocol), Port: int32(p.Port),
			TargetPort: intstr.FromInt32(int32(p.Port))})
	}
	return out
}

// sameDerived says whether cur already is want in what kubesky sets after
// creating it (the IP families and IPs stay as they were allocated).
func sameDerived(cur, want *corev1.Service) bool {
	return equality.Semantic.DeepEqual(cur.Labels, want.Labels) &&
		equality.Semantic.DeepEqual(cur.OwnerReferences, want.OwnerReferences) &&
		equality.Semantic.DeepEqual(cur.Spec.Ports, want.Spec.Ports) &&
		cur.Spec.SessionAffinity == want.Spec.SessionAffinity &&
		equality.Semantic.DeepEqual(cur.Spec.SessionAffinityConfig, want.Spec.SessionAffinityConfig) &&
		equality.Semantic.DeepEqual(cur.Spec.InternalTrafficPolicy, want.Spec.InternalTrafficPolicy) &&
		equality.Semantic.DeepEqual(cur.Spec.TrafficDistribution, want.Spec.TrafficDistribution)
}

// updatedDerived is cur with what sameDerived compares taken from want.
func updatedDerived(cur, want *corev1.Service) *corev1.Service {
	next := cur.DeepCopy()
	next.Labels, next.OwnerReferences = want.Labels, want.OwnerReferences
	next.Spec.Ports = want.Spec.Ports
	next.Spec.SessionAffinity, next.Spec.SessionAffinityConfig = want.Spec.SessionAffinity, want.Spec.SessionAffinityConfig
	next.Spec.InternalTrafficPolicy, next.Spec.TrafficDistribution = want.Spec.InternalTrafficPolicy, want.Spec.TrafficDistribution
	return next
}

// isDerivedFor says whether s is kubesky's derived Service of name.
func isDerivedFor(s *corev1.Service, name cs.ServiceName) bool {
	return s.Labels[managedByLabel] == ManagedBy && s.Labels[mcsv1alpha1.LabelServiceName] == name.Name
}

// clusterIPs are a derived Service's cluster IPs, in its order; none
// until the API server allocated them (or for nil).
func clusterIPs(s *corev1.Service) []netip.Addr {
	if s == nil {
		return nil
	}
	var out []netip.Addr
	for _, ip := range s.Spec.ClusterIPs {
		if addr, err := netip.ParseAddr(ip); err == nil {
			out = append(out, addr)
		}
	}
	return out
}
