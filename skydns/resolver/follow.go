package resolver

import (
	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/skydns/snapshot"
)

// follow appends to out the qtype records (A, AAAA or TXT) owned by lname,
// written with owner as their name, or else the one CNAME it holds.
//
// A name holds either data or one CNAME (RFC 2181 §10.1): when an address
// or a text record lives at or below it, its name records are not
// CNAMEs for it. Otherwise the first name record (in key order) whose CNAME
// answers is the name's CNAME: a CNAME into the zones answers only
// together with what its target yields; a CNAME out of the zones answers
// alone, for a forwarder to complete (see ExternalTarget).
func (res *resolution) follow(owner, lname string, qtype uint16, out []dns.RR) []dns.RR {
	res.visit(lname) // pod names are read at lname, not through lookup
	if kind, label := res.r.classifyPod(lname); kind != notPod {
		return res.podFollow(owner, lname, kind, label, qtype, out)
	}
	if qtype != dns.TypeTXT && res.nsSynthesized(lname) {
		return res.nsAddresses(owner, qtype, out)
	}
	store := res.storeName(lname)
	rs := res.lookup(store, dns.TypeTXT) // every record: data of any type rules CNAMEs out
	defer rs.release()
	if holdsData(rs.es) {
		return res.leaves(owner, rs.es, qtype, out)
	}
	for i := range rs.es {
		if e := &rs.es[i]; isAlias(e) && e.Record.Host != "" {
			if next := res.followCNAME(owner, lname, store, e, qtype, out); len(next) > len(out) {
				return next
			}
		}
	}
	return out
}

// holdsData reports whether an address or a text record is among es.
func holdsData(es []snapshot.Entry) bool {
	for i := range es {
		if isAddress(&es[i]) || isText(&es[i]) {
			return true
		}
	}
	return false
}

// leaves appends the qtype records of es, once per address or text.
func (res *resolution) leaves(owner string, es []snapshot.Entry, qtype uint16, out []dns.RR) []dns.RR {
	var seen leafSet
	for i := range es {
		if e := &es[i]; leafMatches(e, qtype) && seen.add(e) {
			out = append(out, res.leaf(owner, e, qtype))
		}
	}
	return out
}

// followCNAME appends the CNAME of entry e, found for lname at or below
// store, and what its target yields. It skips a target at or below store
// (x CNAME x: a subtree answer that would contain itself), a target already
// in the chain, chains longer than maxChain, and any in-zone target past
// the question's first maxFollows.
func (res *resolution) followCNAME(owner, lname, store string, e *snapshot.Entry, qtype uint16, out []dns.RR) []dns.RR {
	target := e.Record.Host
	if isBelow(store, target) || res.depth >= maxChain || res.inChain(target) {
		return out
	}
	cname := &dns.CNAME{Hdr: res.hdr(owner, dns.TypeCNAME, res.ttl(e)), Target: target}
	if res.r.findZone(target) == nil {
		return append(out, cname)
	}
	if res.follows >= maxFollows {
		return out
	}
	res.follows++
	res.chain[res.depth] = lname
	res.depth++
	next := res.follow(target, target, qtype, nil)
	res.depth--
	if len(next) == 0 {
		return out
	}
	return append(append(out, cname), next...)
}

func (res *resolution) inChain(name string) bool {
	for _, n := range res.chain[:res.depth] {
		if n == name {
			return true
		}
	}
	return false
}

// leafMatches reports whether e holds data of qtype itself.
func leafMatches(e *snapshot.Entry, qtype uint16) bool {
	switch qtype {
	case dns.TypeA:
		return len(e.IP) == 4
	case dns.TypeAAAA:
		return len(e.IP) == 16
	case dns.TypeTXT:
		return isText(e)
	}
	return false
}

func (res *resolution) leaf(owner string, e *snapshot.Entry, qtype uint16) dns.RR {
	h := res.hdr(owner, qtype, res.ttl(e))
	switch qtype {
	case dns.TypeA:
		return &dns.A{Hdr: h, A: e.IP}
	case dns.TypeAAAA:
		return &dns.AAAA{Hdr: h, AAAA: e.IP}
	}
	return &dns.TXT{Hdr: h, Txt: split255(e.Record.Text)}
}

// split255 splits a text into the character-strings of a TXT record, each
// at most 255 bytes.
func split255(s string) []string {
	out := make([]string, 0, len(s)/255+1)
	for len(s) > 255 {
		out = append(out, s[:255])
		s = s[255:]
	}
	return append(out, s)
}

// cname answers a CNAME question: the name's one CNAME, from the first
// record at or below it whose host is a name outside its subtree, unless
// the name holds data (see follow). The target is not followed.
func (res *resolution) cname() []dns.RR {
	store := res.storeName(res.lname)
	rs := res.lookup(store, dns.TypeTXT)
	defer rs.release()
	if holdsData(rs.es) {
		return nil
	}
	for i := range rs.es {
		e := &rs.es[i]
		if isAlias(e) && e.Record.Host != "" && !isBelow(store, e.Record.Host) {
			return []dns.RR{&dns.CNAME{Hdr: res.hdr(res.q.Name, dns.TypeCNAME, res.ttl(e)), Target: e.Record.Host}}
		}
	}
	return nil
}
