package records

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/kubesky/kubesky/contract"
)

// Entry is one record at one etcd key.
type Entry struct {
	Key    string
	Record contract.Record
}

// Build returns the records of one Service, sorted by key with no key twice,
// and a Problem for every part of the objects that yields no record. slices
// are the Service's EndpointSlices, in any order; only a headless Service
// reads them, and slices of other Services are ignored.
func Build(z Zone, svc Service, slices []EndpointSlice) ([]Entry, []Problem) {
	if !z.Exposes(svc.Namespace) {
		return nil, nil
	}
	b := builder{zone: z, svc: &svc}
	if !b.validIdentity() {
		return nil, b.problems
	}
	b.fqdn = z.ServiceFQDN(svc.Namespace, svc.Name)
	b.base = z.ServiceKeyPrefix(svc.Namespace, svc.Name)
	b.entries = make([]Entry, 0, estimate(&svc, slices))
	switch svc.Type {
	case TypeExternalName:
		b.externalName()
	case "", TypeClusterIP, TypeNodePort, TypeLoadBalancer:
		switch {
		case svc.Headless():
			b.headless(slices)
		case !z.ignoreEmpty || b.anyReady(slices):
			b.clusterIP()
		}
	default:
		b.problem("spec.type", svc.Type, "unknown Service type")
	}
	return z.finish(b.entries), b.problems
}

// estimate returns how many records a Service is likely to have, so the
// entries are allocated once.
func estimate(svc *Service, slices []EndpointSlice) int {
	if !svc.Headless() {
		return 2*len(svc.ClusterIPs) + len(svc.Ports)
	}
	n := 0
	for i := range slices {
		n += len(slices[i].Endpoints) * (2 + len(slices[i].Ports))
	}
	return n
}

// builder collects the records of one Service.
type builder struct {
	zone     Zone
	svc      *Service
	fqdn     string // "web.default.svc.cluster.local."
	base     string // "/skydns/local/cluster/svc/default/web/"
	entries  []Entry
	problems []Problem
}

// add appends a record, unless it is not one kube2sky may write (a name
// over the length limits, say): then it is a Problem instead, so that no
// input, however odd, puts an invalid key or value into etcd.
func (b *builder) add(key string, r contract.Record) {
	e := Entry{Key: key, Record: b.zone.record(r)}
	if err := b.zone.CheckEntry(e); err != nil {
		b.problem("record", key, err.Error())
		return
	}
	b.entries = append(b.entries, e)
}

func (b *builder) problem(field, value, reason string) {
	b.problems = append(b.problems, Problem{Kind: "Service", Object: b.svc.Key(), Field: field, Value: value, Reason: reason})
}

func (b *builder) validIdentity() bool {
	ok := true
	if !contract.ValidLabel(b.svc.Namespace) {
		b.problem("metadata.namespace", b.svc.Namespace, "not a DNS label")
		ok = false
	}
	if !contract.ValidLabel(b.svc.Name) {
		b.problem("metadata.name", b.svc.Name, "not a DNS label")
		ok = false
	}
	// <name>.<ns>.svc.<zone>, without the trailing dot
	if ok && len(b.svc.Name)+len(b.svc.Namespace)+len(b.zone.svcDomain)+1 > MaxNameLength {
		fqdn := b.zone.ServiceFQDN(b.svc.Namespace, b.svc.Name)
		b.problem("metadata.name", b.svc.Name, fmt.Sprintf("the Service's name %s is longer than %d characters", fqdn, MaxNameLength))
		ok = false
	}
	return ok
}

// externalName writes the CNAME of an ExternalName Service.
func (b *builder) externalName() {
	target := strings.ToLower(strings.TrimSuffix(b.svc.ExternalName, "."))
	if _, err := netip.ParseAddr(target); err == nil || !contract.ValidDomain(target) {
		b.problem("spec.externalName", b.svc.ExternalName, "not a domain name")
		return
	}
	target += "."
	b.add(b.base+HashLabel(target, 0), contract.Record{Host: target})
}

// clusterIP writes the address, PTR and SRV records of a Service with
// cluster IPs.
func (b *builder) clusterIP() {
	for i, raw := range b.svc.ClusterIPs {
		addr, ok := b.parseClusterIP(i, raw)
		if !ok {
			continue
		}
		host := addr.String()
		b.add(b.base+HashLabel(host, 0), contract.Record{Host: host})
		b.add(b.zone.ReverseKey(addr), contract.Record{Host: b.fqdn})
	}
	if len(b.entries) == 0 {
		return // no cluster IP yet: no name, so no SRV either
	}
	for i, p := range b.svc.Ports {
		if srv, ok := b.srvPath(i, p); ok {
			b.add(b.base+srv+HashLabel(b.fqdn, int(p.Port)), contract.Record{Host: b.fqdn, Port: int(p.Port)})
		}
	}
}

func (b *builder) parseClusterIP(i int, raw string) (netip.Addr, bool) {
	addr, err := netip.ParseAddr(raw)
	reason := "not an IP address"
	if err == nil {
		reason = unusableAddr(addr)
	}
	if reason != "" {
		if raw != "" {
			b.problem(fmt.Sprintf("spec.clusterIPs[%d]", i), raw, reason)
		}
		return netip.Addr{}, false
	}
	return addr, true
}

// srvPath returns "_<proto>/_<name>/" for a named port, and false for an
// unnamed one or (with a Problem) an invalid one.
func (b *builder) srvPath(i int, p Port) (string, bool) {
	if p.Name == "" {
		return "", false
	}
	if reason := portProblem(p); reason != "" {
		b.problem(fmt.Sprintf("spec.ports[%d]", i), portString(p), reason)
		return "", false
	}
	return "_" + protocolLabel(p.Protocol) + "/_" + p.Name + "/", true
}

func portString(p Port) string {
	return fmt.Sprintf("%s/%s/%d", p.Name, p.Protocol, p.Port)
}

func portProblem(p Port) string {
	switch {
	case !contract.ValidLabel(p.Name):
		return "port name is not a DNS label"
	case protocolLabel(p.Protocol) == "":
		return "unknown protocol"
	case p.Port < 1 || p.Port > 65535:
		return "port number out of range 1..65535"
	}
	return ""
}
