package clusterset

import (
	"cmp"
	"net/netip"
	"slices"

	cs "github.com/kubesky/kubesky/contract/clusterset"
)

// View is the merged clusterset at one etcd revision. It is never changed
// once built.
type View struct {
	services   map[cs.ServiceName]*Service
	namespaces map[string]bool
	revision   int64
}

// Service is one exported name merged over its exporting clusters.
type Service struct {
	Type  cs.Type
	Ports []cs.Port // the union
	IPs   []netip.Addr
	// Members are the exporting clusters, oldest export first.
	Members []Member
}

// Member is one cluster's export of a Service.
type Member struct {
	Cluster string
	cs.Export
}

// Merge builds the view of exports and imports at revision.
func Merge(exports map[cs.ExportID]cs.Export, imports map[cs.ServiceName]cs.Import, revision int64) *View {
	v := &View{services: map[cs.ServiceName]*Service{}, namespaces: map[string]bool{}, revision: revision}
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
func unionPorts(members []Member) []cs.Port {
	var union []cs.Port
	for _, m := range members {
		for _, p := range m.Ports {
			if !slices.ContainsFunc(union, func(u cs.Port) bool { return samePort(u, p) }) {
				union = append(union, p)
			}
		}
	}
	return union
}

func samePort(a, b cs.Port) bool {
	return (a.Name != "" && a.Name == b.Name) || (a.Protocol == b.Protocol && a.Port == b.Port)
}

// Service returns the merged Service of a name, or nil.
func (v *View) Service(name cs.ServiceName) *Service { return v.services[name] }

// Conflicts returns the clusters whose export of name differs in type from
// the winner's (the oldest export).
func (v *View) Conflicts(name cs.ServiceName) []string {
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

// exists says whether the name answers at all: a headless Service needs a
// ready endpoint in some cluster.
func (s *Service) exists() bool {
	if s.Type != cs.Headless {
		return true
	}
	return slices.ContainsFunc(s.Members, func(m Member) bool { return len(m.Endpoints) > 0 })
}

// Revision is the etcd revision the view was built at.
func (v *View) Revision() int64 { return v.revision }
