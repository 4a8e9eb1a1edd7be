package clusterset

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/kubesky/kubesky/contract"
)

// Type is an exported Service's kind, as a ServiceImport's spec.type.
type Type string

// The two types of the MCS API.
const (
	ClusterSetIP Type = "ClusterSetIP"
	Headless     Type = "Headless"
)

// Export is one cluster's export of one Service.
type Export struct {
	// Created is the ServiceExport's creationTimestamp.
	Created   time.Time  `json:"created"`
	Type      Type       `json:"type"`
	Ports     []Port     `json:"ports,omitempty"`
	Endpoints []Endpoint `json:"endpoints,omitempty"`
	// EndpointPorts are the endpoints' (target) ports, as the cluster's
	// EndpointSlices give them: an importing cluster's EndpointSlices carry
	// them.
	EndpointPorts []Port `json:"endpointPorts,omitempty"`
	// SessionAffinity is "ClientIP" or empty (None); AffinityTimeout its
	// timeout in seconds (0: the Kubernetes default).
	SessionAffinity string `json:"sessionAffinity,omitempty"`
	AffinityTimeout int    `json:"affinityTimeoutSeconds,omitempty"`
	// IPFamilies are the Service's ("IPv4", "IPv6"), in its order.
	IPFamilies []string `json:"ipFamilies,omitempty"`
	// InternalTrafficPolicy is "Local" or empty (Cluster).
	InternalTrafficPolicy string `json:"internalTrafficPolicy,omitempty"`
	// TrafficDistribution is the Service's (e.g. "PreferClose"), or empty.
	TrafficDistribution string `json:"trafficDistribution,omitempty"`
}

// Port is one port of the exported Service.
type Port struct {
	Name     string `json:"name,omitempty"`
	Protocol string `json:"protocol"`
	Port     int    `json:"port"`
}

// Endpoint is one ready endpoint: its DNS label and its addresses.
type Endpoint struct {
	Hostname  string       `json:"hostname"`
	Addresses []netip.Addr `json:"addresses"`
}

// Import is what the import side decided for a Service: its clusterset IPs.
type Import struct {
	IPs []netip.Addr `json:"ips"`
}

// Encode returns the export's JSON.
func (e Export) Encode() []byte { return mustMarshal(e) }

// Encode returns the import's JSON.
func (i Import) Encode() []byte { return mustMarshal(i) }

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil { // strings, numbers, times and addresses always marshal
		panic(fmt.Sprintf("clusterset: encoding %T: %v", v, err))
	}
	return b
}

// DecodeExport parses and checks the export stored at key; an error names
// the key and the first problem found.
func DecodeExport(key string, value []byte) (Export, error) {
	var e Export
	if err := strictUnmarshal(value, &e); err != nil {
		return Export{}, fmt.Errorf("key %q: invalid export JSON: %w", key, err)
	}
	if err := e.validate(); err != nil {
		return Export{}, fmt.Errorf("key %q: %w", key, err)
	}
	return e, nil
}

// DecodeImport parses and checks the import stored at key.
func DecodeImport(key string, value []byte) (Import, error) {
	var i Import
	if err := strictUnmarshal(value, &i); err != nil {
		return Import{}, fmt.Errorf("key %q: invalid import JSON: %w", key, err)
	}
	if len(i.IPs) == 0 || len(i.IPs) > 2 {
		return Import{}, fmt.Errorf("key %q: an import holds 1 or 2 ips, not %d", key, len(i.IPs))
	}
	return i, nil
}

func strictUnmarshal(value []byte, v any) error {
	d := json.NewDecoder(strings.NewReader(string(value)))
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("trailing data after the JSON object")
	}
	return nil
}

func (e Export) validate() error {
	if e.Created.IsZero() {
		return errors.New("export without a created time")
	}
	if e.Type != ClusterSetIP && e.Type != Headless {
		return fmt.Errorf("export type %q is neither %s nor %s", e.Type, ClusterSetIP, Headless)
	}
	for _, p := range slices.Concat(e.Ports, e.EndpointPorts) {
		if err := p.validate(); err != nil {
			return err
		}
	}
	if err := e.validateService(); err != nil {
		return err
	}
	for _, ep := range e.Endpoints {
		if err := ep.validate(); err != nil {
			return err
		}
	}
	return nil
}

// validateService checks the session affinity and the IP families.
func (e Export) validateService() error {
	if e.SessionAffinity != "" && e.SessionAffinity != "ClientIP" {
		return fmt.Errorf("session affinity %q is neither ClientIP nor empty", e.SessionAffinity)
	}
	if e.AffinityTimeout < 0 || e.AffinityTimeout > 86400 {
		return fmt.Errorf("session affinity timeout %ds is outside 0-86400", e.AffinityTimeout)
	}
	if len(e.IPFamilies) > 2 {
		return fmt.Errorf("%d IP families, at most 2", len(e.IPFamilies))
	}
	for _, f := range e.IPFamilies {
		if f != "IPv4" && f != "IPv6" {
			return fmt.Errorf("IP family %q is neither IPv4 nor IPv6", f)
		}
	}
	if e.InternalTrafficPolicy != "" && e.InternalTrafficPolicy != "Local" {
		return fmt.Errorf("internal traffic policy %q is neither Local nor empty", e.InternalTrafficPolicy)
	}
	if e.TrafficDistribution != "" && !slices.Contains(trafficDistributions, e.TrafficDistribution) {
		return fmt.Errorf("traffic distribution %q is none of %v", e.TrafficDistribution, trafficDistributions)
	}
	return nil
}

// trafficDistributions are the values of a Service's trafficDistribution
// Kubernetes accepts.
var trafficDistributions = []string{"PreferClose", "PreferSameZone", "PreferSameNode"}

func (p Port) validate() error {
	switch {
	case p.Name != "" && !contract.ValidLabel(p.Name):
		return fmt.Errorf("port name %q is not a lower-case DNS label", p.Name)
	case p.Protocol != "TCP" && p.Protocol != "UDP" && p.Protocol != "SCTP":
		return fmt.Errorf("port %q: protocol %q is not TCP, UDP or SCTP", p.Name, p.Protocol)
	case p.Port < 1 || p.Port > 65535:
		return fmt.Errorf("port %q: number %d is outside 1-65535", p.Name, p.Port)
	}
	return nil
}

func (ep Endpoint) validate() error {
	if !contract.ValidLabel(ep.Hostname) {
		return fmt.Errorf("endpoint hostname %q is not a lower-case DNS label", ep.Hostname)
	}
	if len(ep.Addresses) == 0 {
		return fmt.Errorf("endpoint %q has no address", ep.Hostname)
	}
	return nil
}

// DashedName is the label of an endpoint without a hostname: its address
// with dots and colons as dashes (10-1-0-7, fd00--7).
func DashedName(addr netip.Addr) string {
	return strings.NewReplacer(".", "-", ":", "-").Replace(addr.Unmap().String())
}
