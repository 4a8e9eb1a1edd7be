package resolver

import (
	"github.com/miekg/dns"
)

// SOA timers; the serial is the snapshot's revision and the minimum (the
// negative TTL) the configured TTL.
const (
	soaRefresh = 7200
	soaRetry   = 1800
	soaExpire  = 86400
)

// soa is the zone's synthesized SOA record, owned by owner.
func (a *answerer) soa(owner string) *dns.SOA {
	return &dns.SOA{
		Hdr:     a.hdr(owner, dns.TypeSOA, a.r.ttl),
		Ns:      a.zone.mname,
		Mbox:    a.zone.rname,
		Serial:  uint32(a.snap.Revision()),
		Refresh: soaRefresh,
		Retry:   soaRetry,
		Expire:  soaExpire,
		Minttl:  a.r.ttl,
	}
}

// ns answers NS at a zone apex from the records at or below
// ns.dns.<zone>: an address record names its key (ns1.ns.dns.<zone>)
// and is glue, a host name is the server's name. With no record there the
// NS RRset is synthesized (see nsSynthesized).
func (a *answerer) ns() (answer, extra []dns.RR) {
	if a.nsSynthesized(a.zone.ns) {
		return a.synthesizedNS()
	}
	rs := a.lookup(a.zone.ns, dns.TypeNS)
	defer rs.release()
	g := glue{a: a}
	for i := range rs.es {
		e := &rs.es[i]
		if isText(e) {
			continue
		}
		if target := a.target(e); g.want(e, target, 0, 0) {
			answer = append(answer, &dns.NS{Hdr: a.hdr(a.q.Name, dns.TypeNS, a.ttl(e)), Ns: target})
		}
	}
	return answer, g.extra
}

// ptr answers a PTR question from the records at the name's own key whose
// host is a name.
func (a *answerer) ptr() []dns.RR {
	rs := a.exact(a.storeName(a.lname), dns.TypePTR)
	defer rs.release()
	var answer []dns.RR
	var seen set[string]
	for i := range rs.es {
		e := &rs.es[i]
		if !isAddress(e) && seen.add(e.Record.Host) {
			answer = append(answer, &dns.PTR{Hdr: a.hdr(a.q.Name, dns.TypePTR, a.ttl(e)), Ptr: e.Record.Host})
		}
	}
	return answer
}
