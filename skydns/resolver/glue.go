package resolver

import (
	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/skydns/snapshot"
)

// glue collects the additional section of SRV, MX and NS answers: the
// addresses of their targets.
type glue struct {
	res     *resolution
	extra   []dns.RR
	records set[recordKey] // SRV/MX records answered: (target, port or preference, priority)
	addrs   set[recordKey] // address glue: (target, address)
	names   set[string]    // name targets whose addresses were looked up
}

type recordKey struct {
	name     string
	n        uint16
	priority uint16
	addr     string
}

// want reports whether the record of e pointing at target (with port or
// preference n, and priority) belongs in the answer, and adds e's glue.
// Records are answered once per (target, n, priority): two keys holding
// the same target give one record, and records made from addresses that
// share a target have all their addresses as glue. Name targets inside
// the zones get their A and AAAA records as glue.
func (g *glue) want(e *snapshot.Entry, target string, n, priority uint16) bool {
	if isAddress(e) {
		g.address(target, e)
	} else {
		g.name(target)
	}
	return g.records.add(recordKey{name: target, n: n, priority: priority})
}

// address adds target's address e, once.
func (g *glue) address(target string, e *snapshot.Entry) {
	if !g.addrs.add(recordKey{name: target, addr: string(e.IP)}) {
		return
	}
	rrtype := dns.TypeA
	if len(e.IP) == 16 {
		rrtype = dns.TypeAAAA
	}
	g.extra = append(g.extra, g.res.leaf(target, e, rrtype))
}

// name adds the addresses of an in-zone target, once per target. The CNAMEs
// followed to find them come along; the AAAA pass does not repeat them.
func (g *glue) name(target string) {
	if g.res.r.findZone(target) == nil || !g.names.add(target) {
		return
	}
	g.extra = g.res.follow(target, target, dns.TypeA, g.extra)
	for _, rr := range g.res.follow(target, target, dns.TypeAAAA, nil) {
		if _, isCNAME := rr.(*dns.CNAME); !isCNAME || !hasRR(g.extra, rr) {
			g.extra = append(g.extra, rr)
		}
	}
}

func hasRR(rrs []dns.RR, rr dns.RR) bool {
	for _, x := range rrs {
		if dns.IsDuplicate(x, rr) {
			return true
		}
	}
	return false
}
