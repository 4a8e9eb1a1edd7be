package resolver

import (
	"github.com/kubesky/kubesky/skydns/snapshot"
)

// grouped applies SkyDNS groups to the records found for one name: the
// shallowest records that carry a group decide it, and then only records of
// that group or of no group answer. When those shallowest grouped records
// disagree, or none has a group, every record answers. It filters in place.
func grouped(es []snapshot.Entry) []snapshot.Entry {
	group, ok := decidingGroup(es)
	if !ok {
		return es
	}
	out := es[:0]
	for _, e := range es {
		if e.Record.Group == "" || e.Record.Group == group {
			out = append(out, e)
		}
	}
	return out
}

func decidingGroup(es []snapshot.Entry) (string, bool) {
	group, depth, conflict := "", -1, false
	for _, e := range es {
		if e.Record.Group == "" {
			continue
		}
		d := e.Depth()
		switch {
		case depth < 0 || d < depth:
			group, depth, conflict = e.Record.Group, d, false
		case d == depth && e.Record.Group != group:
			conflict = true
		}
	}
	return group, group != "" && !conflict
}
