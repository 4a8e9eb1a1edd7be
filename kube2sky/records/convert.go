package records

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// ServiceFrom copies the fields DNS needs out of an API Service. A Service
// without spec.clusterIPs falls back to spec.clusterIP.
func ServiceFrom(s *corev1.Service) Service {
	ips := s.Spec.ClusterIPs
	if len(ips) == 0 && s.Spec.ClusterIP != "" {
		ips = []string{s.Spec.ClusterIP}
	}
	out := Service{
		Namespace:                s.Namespace,
		Name:                     s.Name,
		Type:                     string(s.Spec.Type),
		ClusterIPs:               ips,
		ExternalName:             s.Spec.ExternalName,
		PublishNotReadyAddresses: s.Spec.PublishNotReadyAddresses,
	}
	if len(s.Spec.Ports) > 0 {
		out.Ports = make([]Port, len(s.Spec.Ports))
		for i, p := range s.Spec.Ports {
			out.Ports[i] = Port{Name: p.Name, Protocol: string(p.Protocol), Port: p.Port}
		}
	}
	return out
}

// EndpointSliceFrom copies the fields DNS needs out of an API EndpointSlice.
// An endpoint whose ready condition is unset counts as ready, as the API
// documents.
func EndpointSliceFrom(s *discoveryv1.EndpointSlice) EndpointSlice {
	return endpointSliceFrom(s, false)
}

// EndpointSliceWithPodNamesFrom is EndpointSliceFrom keeping each
// endpoint's target name (PodName), for Zone.EndpointPodNames.
func EndpointSliceWithPodNamesFrom(s *discoveryv1.EndpointSlice) EndpointSlice {
	return endpointSliceFrom(s, true)
}

func endpointSliceFrom(s *discoveryv1.EndpointSlice, podNames bool) EndpointSlice {
	out := EndpointSlice{
		Namespace:   s.Namespace,
		Name:        s.Name,
		Service:     s.Labels[discoveryv1.LabelServiceName],
		AddressType: string(s.AddressType),
		TriggerTime: triggerTime(s.Annotations[corev1.EndpointsLastChangeTriggerTime]),
	}
	if len(s.Ports) > 0 {
		out.Ports = make([]Port, len(s.Ports))
		for i, p := range s.Ports {
			out.Ports[i] = slicePortFrom(p)
		}
	}
	if len(s.Endpoints) > 0 {
		out.Endpoints = make([]Endpoint, len(s.Endpoints))
		for i := range s.Endpoints {
			out.Endpoints[i] = endpointFrom(&s.Endpoints[i], podNames)
		}
	}
	return out
}

func slicePortFrom(p discoveryv1.EndpointPort) Port {
	var out Port
	if p.Name != nil {
		out.Name = *p.Name
	}
	if p.Protocol != nil {
		out.Protocol = string(*p.Protocol)
	}
	if p.Port != nil {
		out.Port = *p.Port
	}
	return out
}

func endpointFrom(e *discoveryv1.Endpoint, podName bool) Endpoint {
	out := Endpoint{Addresses: e.Addresses, Ready: e.Conditions.Ready == nil || *e.Conditions.Ready}
	if e.Hostname != nil {
		out.Hostname = *e.Hostname
	}
	if podName && out.Hostname == "" && e.TargetRef != nil {
		out.PodName = e.TargetRef.Name
	}
	return out
}

// triggerTime parses the last-change-trigger-time annotation; an absent or
// malformed value is the zero time.
func triggerTime(v string) time.Time {
	if v == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}
	}
	return t
}
