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
func (res *resolution) soa(owner string) *dns.SOA {
	return &dns.SOA{
		Hdr:     res.hdr(owner, dns.TypeSOA, res.r.ttl),
		Ns:      res.zone.mname,
		Mbox:    res.zone.rname,
		Serial:  uint32(res.snap.Revision()),
		Refresh: soaRefresh,
		Retry:   soaRetry,
		Expire:  soaExpire,
		Minttl:  res.r.ttl,
	}
}

// ns answers NS at a zone apex from the records at or below
// ns.dns.<zone>: an address record names its key (ns1.ns.dns.<zone>)
// and is glue, a host name is the server's name. With no record there the
// NS RRset is synthesized (see nsSynthesized).
func (res *resolution) ns() (answer, extra []dns.RR) {
	if res.nsSynthesized(res.zone.ns) {
		return res.synthesizedNS()
	}
	rs := res.lookup(res.zone.ns, dns.TypeNS)
	defer rs.release()
	g := glue{res: res}
	for i := range rs.es {
		e := &rs.es[i]
		if isText(e) {
			continue
		}
		if target := res.target(e); g.want(e, target, 0, 0) {
			answer = append(answer, &dns.NS{Hdr: res.hdr(res.q.Name, dns.TypeNS, res.ttl(e)), Ns: target})
		}
	}
	return answer, g.extra
}

// ptr answers a PTR question from the records at the name's own key whose
// host is a name.
func (res *resolution) ptr() []dns.RR {
	rs := res.exact(res.storeName(res.lname), dns.TypePTR)
	defer rs.release()
	var answer []dns.RR
	var seen set[string]
	for i := range rs.es {
		e := &rs.es[i]
		if !isAddress(e) && seen.add(e.Record.Host) {
			answer = append(answer, &dns.PTR{Hdr: res.hdr(res.q.Name, dns.TypePTR, res.ttl(e)), Ptr: e.Record.Host})
		}
	}
	return answer
}
