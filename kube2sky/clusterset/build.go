package clusterset

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/ptr"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubesky/kubesky/contract"
	cs "github.com/kubesky/kubesky/contract/clusterset"
)

// invalidError says why a ServiceExport cannot be exported; Reason is the
// Valid condition's reason.
type invalidError struct {
	Reason  mcsv1beta1.ServiceExportConditionReason
	Message string
}

func (e *invalidError) Error() string { return string(e.Reason) + ": " + e.Message }

// buildExport is the export of se's Service svc (nil if missing) with the
// ready endpoints of its slices, or an *invalidError.
func buildExport(se *mcsv1beta1.ServiceExport, svc *corev1.Service, slices []*discoveryv1.EndpointSlice) (cs.Export, error) {
	if svc == nil {
		return cs.Export{}, &invalidError{mcsv1beta1.ServiceExportReasonNoService, fmt.Sprintf("Service %s/%s does not exist", se.Namespace, se.Name)}
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return cs.Export{}, &invalidError{mcsv1beta1.ServiceExportReasonInvalidServiceType, "an ExternalName Service cannot be exported"}
	}
	e := cs.Export{Created: se.CreationTimestamp.UTC(), Type: cs.ClusterSetIP, Ports: exportPorts(svc.Spec.Ports),
		Endpoints: readyEndpoints(slices), EndpointPorts: endpointPorts(slices)}
	if svc.Spec.ClusterIP == corev1.ClusterIPNone {
		e.Type = cs.Headless
	}
	for _, f := range svc.Spec.IPFamilies {
		e.IPFamilies = append(e.IPFamilies, string(f))
	}
	if ptr.Deref(svc.Spec.InternalTrafficPolicy, "") == corev1.ServiceInternalTrafficPolicyLocal {
		e.InternalTrafficPolicy = string(corev1.ServiceInternalTrafficPolicyLocal)
	}
	e.TrafficDistribution = ptr.Deref(svc.Spec.TrafficDistribution, "")
	if svc.Spec.SessionAffinity == corev1.ServiceAffinityClientIP {
		e.SessionAffinity = string(corev1.ServiceAffinityClientIP)
		if c := svc.Spec.SessionAffinityConfig; c != nil && c.ClientIP != nil && c.ClientIP.TimeoutSeconds != nil {
			e.AffinityTimeout = int(*c.ClientIP.TimeoutSeconds)
		}
	}
	return e, nil
}

// endpointPorts are the slices' ports, each once, sorted.
func endpointPorts(from []*discoveryv1.EndpointSlice) []cs.Port {
	var out []cs.Port
	for _, s := range from {
		for _, p := range s.Ports {
			if p.Port == nil {
				continue
			}
			port := cs.Port{Name: ptr.Deref(p.Name, ""), Protocol: string(ptr.Deref(p.Protocol, corev1.ProtocolTCP)), Port: int(*p.Port)}
			if !slices.Contains(out, port) {
				out = append(out, port)
			}
		}
	}
	slices.SortFunc(out, func(a, b cs.Port) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Protocol, b.Protocol), cmp.Compare(a.Port, b.Port))
	})
	return out
}

func exportPorts(ports []corev1.ServicePort) []cs.Port {
	var out []cs.Port
	for _, p := range ports {
		out = append(out, cs.Port{Name: p.Name, Protocol: string(p.Protocol), Port: int(p.Port)})
	}
	return out
}

// readyEndpoints are the slices' ready endpoints (no condition counts as
// ready), one per name, sorted: an endpoint's hostname when it is a DNS
// label, else its first address dashed. An endpoint in two slices (one per
// family) keeps the addresses of both.
func readyEndpoints(slices []*discoveryv1.EndpointSlice) []cs.Endpoint {
	byName := map[string]*cs.Endpoint{}
	for _, s := range slices {
		for _, ep := range s.Endpoints {
			addrs := parseAddrs(ep.Addresses)
			if len(addrs) == 0 || (ep.Conditions.Ready != nil && !*ep.Conditions.Ready) {
				continue
			}
			name := endpointName(ep.Hostname, addrs[0])
			if byName[name] == nil {
				byName[name] = &cs.Endpoint{Hostname: name}
			}
			byName[name].Addresses = appendNew(byName[name].Addresses, addrs)
		}
	}
	return sortedEndpoints(byName)
}

func endpointName(hostname *string, first netip.Addr) string {
	if hostname != nil && contract.ValidLabel(*hostname) {
		return *hostname
	}
	return cs.DashedName(first)
}

func parseAddrs(s []string) []netip.Addr {
	var out []netip.Addr
	for _, a := range s {
		if addr, err := netip.ParseAddr(a); err == nil {
			out = append(out, addr.Unmap())
		}
	}
	return out
}

func appendNew(to, from []netip.Addr) []netip.Addr {
	for _, a := range from {
		if !slices.Contains(to, a) {
			to = append(to, a)
		}
	}
	return to
}

func sortedEndpoints(byName map[string]*cs.Endpoint) []cs.Endpoint {
	out := make([]cs.Endpoint, 0, len(byName))
	for _, ep := range byName {
		slices.SortFunc(ep.Addresses, netip.Addr.Compare)
		out = append(out, *ep)
	}
	slices.SortFunc(out, func(a, b cs.Endpoint) int { return cmp.Compare(a.Hostname, b.Hostname) })
	return out
}

// conflict compares own (this cluster's export) with the others of the
// same Service (keyed by cluster ID, own's included or not) by KEP-1645's
// rule: the oldest export decides. It returns NoConflicts, TypeConflict or
// PortConflict and a message; every constituent export gets the same one.
func conflict(cluster string, own cs.Export, all map[string]cs.Export) (mcsv1beta1.ServiceExportConditionReason, string) {
	all[cluster] = own
	ids := make([]string, 0, len(all))
	for id := range all {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int { return cmp.Or(all[a].Created.Compare(all[b].Created), cmp.Compare(a, b)) })
	oldest := all[ids[0]]
	for _, id := range ids[1:] {
		if all[id].Type != oldest.Type {
			return mcsv1beta1.ServiceExportReasonTypeConflict, fmt.Sprintf("cluster %s exports it as %s, the oldest export (cluster %s) as %s", id, all[id].Type, ids[0], oldest.Type)
		}
	}
	if err := portConflict(ids, all); err != nil {
		return mcsv1beta1.ServiceExportReasonPortConflict, err.Error()
	}
	for _, id := range ids[1:] {
		if reason, what := propertyConflict(oldest, all[id]); reason != "" {
			return reason, fmt.Sprintf("cluster %s's %s differs from the oldest export's (cluster %s)", id, what, ids[0])
		}
	}
	return mcsv1beta1.ServiceExportReasonNoConflicts, "no conflict with the other clusters' exports"
}

// propertyConflict names the first property of e that differs from the
// oldest export's, and the Conflict reason it gives; "" when none does.
func propertyConflict(oldest, e cs.Export) (mcsv1beta1.ServiceExportConditionReason, string) {
	switch {
	case e.SessionAffinity != oldest.SessionAffinity:
		return mcsv1beta1.ServiceExportReasonSessionAffinityConflict, "session affinity"
	case e.AffinityTimeout != oldest.AffinityTimeout:
		return mcsv1beta1.ServiceExportReasonSessionAffinityConfigConflict, "session affinity timeout"
	case !slices.Equal(e.IPFamilies, oldest.IPFamilies):
		return mcsv1beta1.ServiceExportReasonIPFamilyConflict, "IP families"
	case e.InternalTrafficPolicy != oldest.InternalTrafficPolicy:
		return mcsv1beta1.ServiceExportReasonInternalTrafficPolicyConflict, "internal traffic policy"
	case e.TrafficDistribution != oldest.TrafficDistribution:
		return mcsv1beta1.ServiceExportReasonTrafficDistributionConflict, "traffic distribution"
	}
	return "", ""
}

// portConflict finds a port whose name, or protocol and number, an older
// export gives another meaning.
func portConflict(ids []string, all map[string]cs.Export) error {
	seen := map[string]cs.Port{}
	for _, id := range ids {
		for _, p := range all[id].Ports {
			for _, k := range []string{"name/" + p.Name, fmt.Sprintf("num/%s/%d", p.Protocol, p.Port)} {
				prev, ok := seen[k]
				switch {
				case k == "name/":
				case !ok:
					seen[k] = p
				case prev != p:
					return fmt.Errorf("cluster %s's port %q %s/%d clashes with an older export's %q %s/%d", id, p.Name, p.Protocol, p.Port, prev.Name, prev.Protocol, prev.Port)
				}
			}
		}
	}
	return nil
}
