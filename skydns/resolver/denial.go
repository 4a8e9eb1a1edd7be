package resolver

import (
	"strings"

	"github.com/kubesky/kubesky/skydns/snapshot"
)

// DeniedBelow returns the highest name at or above qname, below zone's
// apex, that no record lives at or below, so that every name at or below
// it is denied (NXDOMAIN) as qname is, with the same authority section
// (RFC 8020): a cache may answer them all from qname's answer. It returns
// "" when qname exists, has a "*" or "any" label, or is in a reverse zone
// or under pod.<zone>, whose names are answered from more than records.
// Neither the zone's ns.dns.<zone> (synthesized) nor another zone is at or
// below the name returned.
func (r *Resolver) DeniedBelow(snap *snapshot.Snapshot, zone ZoneMatch, qname string) string {
	z, lname := zone.z, lowerFqdn(qname)
	if z.reverse || hasWildcardLabel(lname) || r.podZone != "" && isSubdomain(r.podZone, lname) || !r.deniable(snap, z, lname) {
		return ""
	}
	for {
		parent := parentName(lname)
		if parent == z.name || !r.deniable(snap, z, parent) {
			return lname
		}
		lname = parent
	}
}

// deniable reports whether nothing at or below lname, a name in z below
// its apex, answers: no record, not z's synthesized name server, no other
// zone.
func (r *Resolver) deniable(snap *snapshot.Snapshot, z *zone, lname string) bool {
	if isSubdomain(lname, z.ns) || snap.Exists(lname) {
		return false
	}
	for _, other := range r.zones {
		if other != z && isSubdomain(lname, other.name) {
			return false
		}
	}
	return true
}

// parentName removes the first label of a fully qualified name.
func parentName(name string) string {
	_, parent, _ := strings.Cut(name, ".")
	if parent == "" {
		return "."
	}
	return parent
}
