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
func (res *resolution) nsSynthesized(lname string) bool {
	if !strings.HasPrefix(lname, "ns.dns.") {
		return false
	}
	z := res.r.findZone(lname)
	return z != nil && z.ns == lname && !res.snap.Exists(lname)
}

// synthesizedNS answers NS at the apex with ns.dns.<zone> and its
// addresses as glue.
func (res *resolution) synthesizedNS() (answer, extra []dns.RR) {
	ns := &dns.NS{Hdr: res.hdr(res.q.Name, dns.TypeNS, res.r.ttl), Ns: res.zone.ns}
	extra = res.nsAddresses(res.zone.ns, dns.TypeA, nil)
	return []dns.RR{ns}, res.nsAddresses(res.zone.ns, dns.TypeAAAA, extra)
}

// nsAddresses appends the configured name server addresses of qtype (A or
// AAAA), owned by owner.
func (res *resolution) nsAddresses(owner string, qtype uint16, out []dns.RR) []dns.RR {
	for _, addr := range res.r.nsAddrs {
		h := res.hdr(owner, qtype, res.r.ttl)
		switch {
		case qtype == dns.TypeA && addr.Is4():
			out = append(out, &dns.A{Hdr: h, A: addr.AsSlice()})
		case qtype == dns.TypeAAAA && addr.Is6():
			out = append(out, &dns.AAAA{Hdr: h, AAAA: addr.AsSlice()})
		}
	}
	return out
}
