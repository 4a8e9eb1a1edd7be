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
	return r.ResolveVisiting(snap, req, nil)
}

// ResolveVisiting is Resolve that also calls visit, when not nil, with
// every name whose records (at or below it; a "*" or "any" label matching
// any one label) the answer was read from. An answer made from one
// snapshot is the answer in a later one where no record at or below those
// names, nor at or below the question's name, changed: only the SOA
// serial (the revision) differs. A cache of answers uses it.
func (r *Resolver) ResolveVisiting(snap *snapshot.Snapshot, req *dns.Msg, visit func(name string)) *dns.Msg {
	if text, ok := r.chaosText(req); ok {
		return chaos(req, text)
	}
	resp := new(dns.Msg)
	if rcode, ok := r.precheck(req); !ok {
		return resp.SetRcode(req, rcode)
	}
	resp.SetReply(req)
	q := req.Question[0]
	z := r.findZone(q.Name)
	if z == nil {
		resp.Rcode = dns.RcodeRefused
		return resp
	}
	resp.Authoritative = true
	a := newAnswerer(r, snap, z, q)
	defer a.release()
	if visit != nil {
		a.visit = visit
	}
	resp.Answer, resp.Extra = a.answer()
	if len(resp.Answer) == 0 {
		r.negative(resp, a)
	}
	return resp
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
func (r *Resolver) negative(resp *dns.Msg, a *answerer) {
	resp.Extra = nil
	if !a.exists() {
		resp.Rcode = dns.RcodeNameError
	}
	resp.Ns = []dns.RR{a.soa(a.zone.name)}
}
