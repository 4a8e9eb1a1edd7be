package resolver

import (
	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/skydns/snapshot"
)

// Resolve answers req from snap. It never returns nil and never does I/O.
//
// The response echoes the question as asked, is authoritative for names in
// the zones, and is REFUSED for names outside them and for class CH but
// the identity questions (version.bind., hostname.bind., id.server. TXT). It carries no EDNS0
// record and is not truncated: both are the server's job.
func (r *Resolver) Resolve(snap *snapshot.Snapshot, req *dns.Msg) *dns.Msg {
	if text, ok := r.chaosText(req); ok {
		return chaos(req, text)
	}
	if rcode, ok := r.precheck(req); !ok {
		return new(dns.Msg).SetRcode(req, rcode)
	}
	z, ok := r.Match(req.Question[0].Name)
	if !ok {
		resp := new(dns.Msg).SetReply(req)
		resp.Rcode = dns.RcodeRefused
		return resp
	}
	resp, _ := r.ResolveIn(snap, z, req, nil)
	return resp
}

// ZoneMatch is the served zone a name is in, as Match found it.
type ZoneMatch struct{ z *zone }

// Name is the zone's name: fully qualified, lower case.
func (m ZoneMatch) Name() string { return m.z.name }

// Reverse is true for in-addr.arpa. and ip6.arpa.
func (m ZoneMatch) Reverse() bool { return m.z.reverse }

// Match returns the served zone qname is in: the longest that matches.
// ResolveIn answers the names in it.
func (r *Resolver) Match(qname string) (ZoneMatch, bool) {
	z := r.findZone(qname)
	return ZoneMatch{z}, z != nil
}

// ResolveIn is Resolve for a question whose name Match put in zone: the
// response, and the name outside the zones its CNAME chain ends on ("" for
// none; see ExternalTarget). Class CH questions are REFUSED here.
//
// visit, when not nil, is called with every name whose records (at or
// below it; a "*" or "any" label matching any one label) the answer was
// read from. An answer made from one snapshot is the answer in a later one
// where no record at or below those names, nor at or below the question's
// name, changed: only the SOA serial (the revision) differs. A cache of
// answers uses it.
func (r *Resolver) ResolveIn(snap *snapshot.Snapshot, zone ZoneMatch, req *dns.Msg, visit func(name string)) (resp *dns.Msg, external string) {
	if rcode, ok := r.precheck(req); !ok {
		return new(dns.Msg).SetRcode(req, rcode), ""
	}
	resp = new(dns.Msg).SetReply(req)
	resp.Authoritative = true
	res := newResolution(r, snap, zone.z, req.Question[0])
	defer res.release()
	if visit != nil {
		res.visit = visit
	}
	resp.Answer, resp.Extra = res.answer()
	if len(resp.Answer) == 0 {
		r.negative(resp, res)
		return resp, ""
	}
	external, _ = r.ExternalTarget(resp)
	return resp, external
}

// precheck rejects what is not a plain question: another opcode, not
// exactly one question, a class other than IN, a zone transfer (REFUSED:
// the server answers allowed transfers over TCP before the resolver).
func (r *Resolver) precheck(req *dns.Msg) (int, bool) {
	switch {
	case req.Opcode != dns.OpcodeQuery:
		return dns.RcodeNotImplemented, false
	case len(req.Question) != 1:
		return dns.RcodeFormatError, false
	case req.Question[0].Qclass != dns.ClassINET:
		return dns.RcodeRefused, false
	case req.Question[0].Qtype == dns.TypeAXFR || req.Question[0].Qtype == dns.TypeIXFR:
		return dns.RcodeRefused, false
	}
	return dns.RcodeSuccess, true
}

// negative turns an empty answer into NODATA (the name exists) or NXDOMAIN,
// with the zone's SOA in the authority section; its minimum is the
// negative TTL.
func (r *Resolver) negative(resp *dns.Msg, res *resolution) {
	resp.Extra = nil
	if !res.exists() {
		resp.Rcode = dns.RcodeNameError
	}
	resp.Ns = []dns.RR{res.soa(res.zone.name)}
}
