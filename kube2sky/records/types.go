package records

import "time"

// The Service types Build distinguishes; any other value is a Problem.
const (
	TypeClusterIP    = "ClusterIP"
	TypeNodePort     = "NodePort"
	TypeLoadBalancer = "LoadBalancer"
	TypeExternalName = "ExternalName"
)

// ClusterIPNone is the cluster IP of a headless Service.
const ClusterIPNone = "None"

// Service is the part of a core/v1 Service that DNS needs.
type Service struct {
	Namespace string
	Name      string
	// Type is the Service type; "" means ClusterIP.
	Type string
	// ClusterIPs holds every cluster IP (one per family), or "None" for a
	// headless Service.
	ClusterIPs               []string
	ExternalName             string
	PublishNotReadyAddresses bool
	Ports                    []Port
}

// Port is a named or unnamed port of a Service or an EndpointSlice.
type Port struct {
	Name string
	// Protocol is TCP, UDP or SCTP; "" means TCP.
	Protocol string
	// Port is the port number; 0 means none (an EndpointSlice port that
	// stands for all ports).
	Port int32
}

// EndpointSlice is the part of a discovery/v1 EndpointSlice that DNS needs.
type EndpointSlice struct {
	Namespace string
	Name      string
	// Service is the kubernetes.io/service-name label: the Service the slice
	// belongs to.
	Service string
	// AddressType is IPv4, IPv6 or FQDN; FQDN slices carry no records.
	AddressType string
	Ports       []Port
	Endpoints   []Endpoint
	// TriggerTime is the endpoints.kubernetes.io/last-change-trigger-time
	// annotation, the moment the change this version reflects happened; zero
	// when absent. Build ignores it.
	TriggerTime time.Time
}

// Endpoint is one endpoint of an EndpointSlice.
type Endpoint struct {
	Addresses []string
	Hostname  string
	// PodName is the name of the endpoint's target (its pod), kept only
	// without a hostname and for Zone.EndpointPodNames.
	PodName string
	// Ready is the ready condition, with an unset condition counted as ready.
	Ready bool
}

// Key returns the Service's queue key, "namespace/name".
func (s *Service) Key() string { return s.Namespace + "/" + s.Name }

// Headless reports whether the Service has no cluster IP of its own.
func (s *Service) Headless() bool {
	return len(s.ClusterIPs) > 0 && s.ClusterIPs[0] == ClusterIPNone
}

// ServiceKey returns the queue key of the Service the slice belongs to, or ""
// when it names none.
func (s *EndpointSlice) ServiceKey() string {
	if s.Service == "" {
		return ""
	}
	return s.Namespace + "/" + s.Service
}
