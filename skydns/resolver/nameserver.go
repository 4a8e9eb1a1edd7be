package resolver

import (
	"strings"

	"github.com/miekg/dns"
)

// The zone's name server: when no record lives at or below ns.dns.<zone>,
// the apex's NS RRset is synthesized as ns.dns.<zone> (the SOA's primary
// server), and that name answers A and AAAA with Config.NSAddrs, so the NS
// target always resolves where the addresses are configured.

// nsSynthesized reports whether lname is a zone's ns.dns.<zone> with no
// record at or below it: its NS and addresses come from the config.
func (a *answerer) nsSynthesized(lname string) bool {
	if !strings.HasPrefix(lname, "ns.dns.") {
		return false
	}
	z := a.r.findZone(lname)
	return z != nil && z.ns == lname && !a.snap.Exists(lname)
}

// synthesizedNS answers NS at the apex with ns.dns.<zone> and its
// addresses as glue.
func (a *answerer) synthesizedNS() (answer, extra []dns.RR) {
	ns := &dns.NS{Hdr: a.hdr(a.q.Name, dns.TypeNS, a.r.ttl), Ns: a.zone.ns}
	extra = a.nsAddresses(a.zone.ns, dns.TypeA, nil)
	return []dns.RR{ns}, a.nsAddresses(a.zone.ns, dns.TypeAAAA, extra)
}

// nsAddresses appends the configured name server addresses of qtype (A or
// AAAA), owned by owner.
func (a *answerer) nsAddresses(owner string, qtype uint16, out []dns.RR) []dns.RR {
	for _, addr := range a.r.nsAddrs {
		h := a.hdr(owner, qtype, a.r.ttl)
		switch {
		case qtype == dns.TypeA && addr.Is4():
			out = append(out, &dns.A{Hdr: h, A: addr.AsSlice()})
		case qtype == dns.TypeAAAA && addr.Is6():
			out = append(out, &dns.AAAA{Hdr: h, AAAA: addr.AsSlice()})
		}
	}
	return out
}
