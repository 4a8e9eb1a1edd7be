package records

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/kubesky/kubesky/contract"
)

// headless writes the records of every ready endpoint (every endpoint with
// publishNotReadyAddresses) of a headless Service.
func (b *builder) headless(slices []EndpointSlice) {
	for i := range slices {
		s := &slices[i]
		if s.Namespace != b.svc.Namespace || s.Service != b.svc.Name || s.AddressType == "FQDN" {
			continue
		}
		ports := b.slicePorts(s)
		for j := range s.Endpoints {
			if b.published(&s.Endpoints[j]) {
				b.endpoint(s, j, ports)
			}
		}
	}
}

// published says whether an endpoint of the Service is answered: ready,
// or any with publishNotReadyAddresses.
func (b *builder) published(e *Endpoint) bool {
	return e.Ready || b.svc.PublishNotReadyAddresses
}

// anyReady says whether one of the Service's slices has an endpoint with
// an address that is published.
func (b *builder) anyReady(slices []EndpointSlice) bool {
	for i := range slices {
		s := &slices[i]
		if s.Namespace != b.svc.Namespace || s.Service != b.svc.Name {
			continue
		}
		for j := range s.Endpoints {
			if b.published(&s.Endpoints[j]) && len(s.Endpoints[j].Addresses) > 0 {
				return true
			}
		}
	}
	return false
}

// slicePort is a named port of a slice with its SRV key path.
type slicePort struct {
	path string // "_tcp/_http/"
	port int
}

func (b *builder) slicePorts(s *EndpointSlice) []slicePort {
	var ports []slicePort
	for i, p := range s.Ports {
		if p.Name == "" || p.Port == 0 {
			continue
		}
		if reason := portProblem(p); reason != "" {
			b.sliceProblem(s, fmt.Sprintf("ports[%d]", i), portString(p), reason)
			continue
		}
		ports = append(ports, slicePort{path: "_" + protocolLabel(p.Protocol) + "/_" + p.Name + "/", port: int(p.Port)})
	}
	return ports
}

// endpoint writes the address, SRV and PTR records of one endpoint.
func (b *builder) endpoint(s *EndpointSlice, j int, ports []slicePort) {
	e := &s.Endpoints[j]
	if e.Hostname != "" && !contract.ValidLabel(e.Hostname) {
		b.sliceProblem(s, fmt.Sprintf("endpoints[%d].hostname", j), e.Hostname, "not a DNS label")
		return
	}
	for k, raw := range e.Addresses {
		addr, ok := b.endpointAddr(s, j, k, raw)
		if !ok {
			continue
		}
		label := b.endpointLabel(e, addr)
		target := label + "." + b.fqdn
		if len(target)-1 > MaxNameLength {
			b.sliceProblem(s, fmt.Sprintf("endpoints[%d]", j), target, fmt.Sprintf("the endpoint's name is longer than %d characters", MaxNameLength))
			continue
		}
		b.add(b.base+label, contract.Record{Host: addr.String()})
		b.add(b.zone.ReverseKey(addr), contract.Record{Host: target})
		for _, p := range ports {
			b.add(b.base+p.path+label, contract.Record{Host: target, Port: p.port})
		}
	}
}

// endpointLabel is the name of an endpoint's address below the Service:
// its hostname, else its pod's name (Zone.EndpointPodNames) where that is
// a DNS label, else the dashed address.
func (b *builder) endpointLabel(e *Endpoint, addr netip.Addr) string {
	switch {
	case e.Hostname != "":
		return e.Hostname
	case b.zone.podNames && contract.ValidLabel(e.PodName):
		return strings.ToLower(e.PodName)
	}
	return DashedIP(addr)
}

// endpointAddr parses an address of the slice's address type.
func (b *builder) endpointAddr(s *EndpointSlice, j, k int, raw string) (netip.Addr, bool) {
	addr, err := netip.ParseAddr(raw)
	reason := ""
	switch {
	case err != nil:
		reason = "not an IP address"
	case addr.Is4() && s.AddressType == "IPv6", addr.Is6() && !addr.Is4In6() && s.AddressType == "IPv4":
		reason = "address does not match addressType " + s.AddressType
	default:
		reason = unusableAddr(addr)
	}
	if reason != "" {
		b.sliceProblem(s, fmt.Sprintf("endpoints[%d].addresses[%d]", j, k), raw, reason)
		return netip.Addr{}, false
	}
	return addr, true
}

func (b *builder) sliceProblem(s *EndpointSlice, field, value, reason string) {
	b.problems = append(b.problems, Problem{
		Kind: "EndpointSlice", Object: s.Namespace + "/" + s.Name, Field: field, Value: value, Reason: reason,
	})
}
