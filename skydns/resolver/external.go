package resolver

import (
	"strings"

	"github.com/miekg/dns"
)

// ExternalTarget reports the name outside the served zones that resp's
// answer ends on: a chain of CNAMEs from the question's name whose last
// target has no record of the question's type in the answer. A forwarder
// resolves that name and appends what it finds; Resolve never does I/O.
// Only A, AAAA and TXT answers follow CNAMEs.
func (r *Resolver) ExternalTarget(resp *dns.Msg) (string, bool) {
	if resp == nil || len(resp.Question) != 1 || resp.Rcode != dns.RcodeSuccess {
		return "", false
	}
	q := resp.Question[0]
	if q.Qtype != dns.TypeA && q.Qtype != dns.TypeAAAA && q.Qtype != dns.TypeTXT {
		return "", false
	}
	name := chainEnd(resp.Answer, q.Name)
	if strings.EqualFold(name, q.Name) || r.findZone(name) != nil || hasType(resp.Answer, name, q.Qtype) {
		return "", false
	}
	return name, true
}

// chainEnd follows CNAMEs in rrs from name and returns the last target.
func chainEnd(rrs []dns.RR, name string) string {
	for range rrs { // each step uses one CNAME, so this bounds loops
		next, ok := cnameOf(rrs, name)
		if !ok {
			break
		}
		name = next
	}
	return name
}

func cnameOf(rrs []dns.RR, name string) (string, bool) {
	for _, rr := range rrs {
		if c, ok := rr.(*dns.CNAME); ok && strings.EqualFold(c.Hdr.Name, name) {
			return c.Target, true
		}
	}
	return "", false
}

func hasType(rrs []dns.RR, name string, rrtype uint16) bool {
	for _, rr := range rrs {
		if rr.Header().Rrtype == rrtype && strings.EqualFold(rr.Header().Name, name) {
			return true
		}
	}
	return false
}
