package clusterset

import (
	"cmp"
	"net/netip"
	"slices"
)

// View is the merged clusterset at one etcd revision. It is never changed
// once built.
type View struct {
	services   map[ServiceName]*Service
	namespaces map[string]bool
	revision   int64
}

// Service is one exported name merged over its exporting clusters.
type Service struct {
	Type  Type
	Ports []Port // the union
	IPs   []netip.Addr
	// Members are the exporting clusters, oldest export first.
	Members []Member
}

// Member is one cluster's export of a Service.
type Member struct {
	Cluster string
	Export
}

// Merge builds the view of exports and imports at revision.
func Merge(exports map[ExportID]Export, imports map[ServiceName]Import, revision int64) *View {
	v := &View{services: map[ServiceName]*Service{}, namespaces: map[string]bool{}, revision: revision}
	for id, e := range exports {
		svc := v.services[id.ServiceName]
		if svc == nil {
			svc = &Service{}
			v.services[id.ServiceName] = svc
			v.namespaces[id.Namespace] = true
		}
		svc.Members = append(svc.Members, Member{Cluster: id.Cluster, Export: e})
	}
	for name, svc := range v.services {
		slices.SortFunc(svc.Members, oldestFirst)
		svc.Type = svc.Members[0].Type
		svc.Ports = unionPorts(svc.Members)
		svc.IPs = imports[name].IPs
	}
	return v
}

func oldestFirst(a, b Member) int {
	return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.Cluster, b.Cluster))
}

// unionPorts merges the members' ports, oldest first: a port whose name,
// or whose protocol and number, is already taken is left out (a port
// conflict).
func unionPorts(members []Member) []Port {
	var union []Port
	for _, m := range members {
		for _, p := range m.Ports {
			if !slices.ContainsFunc(union, func(u Port) bool { return samePort(u, p) }) {
				union = append(union, p)
			}
		}
	}
	return union
}

func samePort(a, b Port) bool {
	return (a.Name != "" && a.Name == b.Name) || (a.Protocol == b.Protocol && a.Port == b.Port)
}

// Service returns the merged Service of a name, or nil.
func (v *View) Service(name ServiceName) *Service { return v.services[name] }

// Conflicts returns the clusters whose export of name differs in type from
// the winner's (the oldest export).
func (v *View) Conflicts(name ServiceName) []string {
	svc := v.services[name]
	if svc == nil {
		return nil
	}
	var out []string
	for _, m := range svc.Members[1:] {
		if m.Type != svc.Type {
			out = append(out, m.Cluster)
		}
	}
	return out
}

// Exists says whether the name answers at all: a headless Service needs a
// ready endpoint in some cluster.
func (s *Service) Exists() bool {
	if s.Type != Headless {
		return true
	}
	return slices.ContainsFunc(s.Members, func(m Member) bool { return len(m.Endpoints) > 0 })
}

// HasNamespace says whether some cluster exports a Service of namespace ns.
func (v *View) HasNamespace(ns string) bool { return v.namespaces[ns] }

// Len is the number of exported names.
func (v *View) Len() int { return len(v.services) }

// Names are the exported names, in no order.
func (v *View) Names() []ServiceName {
	out := make([]ServiceName, 0, len(v.services))
	for name := range v.services {
		out = append(out, name)
	}
	return out
}

// Revision is the etcd revision the view was built at.
func (v *View) Revision() int64 { return v.revision }
