package transfer

import (
	"slices"
	"strings"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/skydns/resolver"
	"github.com/kubesky/kubesky/skydns/snapshot"
)

// dataTypes are the types asked at every name of a zone, besides CNAME.
var dataTypes = []uint16{dns.TypeNS, dns.TypeA, dns.TypeAAAA, dns.TypeTXT, dns.TypeSRV, dns.TypeMX, dns.TypePTR}

// Records returns zone as a transfer carries it: the SOA, every record of
// every name Names lists, and the SOA again. ok is false when zone is not
// the apex of one of res's zones.
func Records(res *resolver.Resolver, snap *snapshot.Snapshot, zone string) (rrs []dns.RR, ok bool) {
	zone = dns.Fqdn(strings.ToLower(zone))
	soa, ok := SOA(res, snap, zone)
	if !ok {
		return nil, false
	}
	rrs = []dns.RR{soa}
	for _, name := range Names(res, snap, zone) {
		rrs = appendName(rrs, res, snap, name, name == zone)
	}
	return append(rrs, soa), true
}

// SOA is zone's SOA record; ok is false when zone is not the apex of one
// of res's zones.
func SOA(res *resolver.Resolver, snap *snapshot.Snapshot, zone string) (*dns.SOA, bool) {
	if z, ok := res.Zone(zone); !ok || z != zone {
		return nil, false
	}
	for _, rr := range ask(res, snap, zone, dns.TypeSOA) {
		if soa, ok := rr.(*dns.SOA); ok {
			return soa, true
		}
	}
	return nil, false
}

// Names returns the names of zone that may own records, the apex first
// and the others sorted: ns.dns.<zone> (the synthesized name server) and
// every name at or above a record's key, up to the apex, that is in zone
// rather than in a zone below it. Names with a wildcard label are left
// out.
func Names(res *resolver.Resolver, snap *snapshot.Snapshot, zone string) []string {
	seen := map[string]bool{zone: true}
	for _, e := range snap.Lookup(zone) {
		name, ok := contract.Name(snap.Prefix(), e.Key())
		for ok && name != zone && !seen[name] {
			seen[name] = true
			name, ok = parent(name)
		}
	}
	seen["ns.dns."+zone] = true
	delete(seen, zone)
	names := make([]string, 0, len(seen))
	for name := range seen {
		if z, _ := res.Zone(name); z == zone && valid(name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return append([]string{zone}, names...)
}

// appendName appends name's records: its answers to each of dataTypes,
// or its CNAME alone. A name has either data or one CNAME (RFC 2181), but
// the resolver answers a name whose records point at a host name with a
// CNAME for address questions and with SRV or MX records for those: the
// CNAME stands for the name unless the name has MX records or SRV records
// with a port (kube2sky's _<port>._<proto> names).
func appendName(out []dns.RR, res *resolver.Resolver, snap *snapshot.Snapshot, name string, apex bool) []dns.RR {
	kinds := kindsAt(snap, name, apex)
	var data []dns.RR
	for _, qtype := range dataTypes {
		if kinds.may(qtype) {
			data = append(data, owned(ask(res, snap, name, qtype), name, qtype)...)
		}
	}
	if !kinds.may(dns.TypeCNAME) {
		return append(out, data...)
	}
	cname := owned(ask(res, snap, name, dns.TypeCNAME), name, dns.TypeCNAME)
	if len(cname) > 0 && !servesPorts(data) {
		return append(out, cname...)
	}
	return append(out, data...)
}

// kinds says which kinds of record live at or below a name, so that only
// the questions that may have an answer there are asked (a name's own
// A, AAAA, TXT and MX records come from its own records; CNAME chains are
// not its records).
type kinds struct {
	apex, ipv4, ipv6, text, host, mail bool
}

// kindsAt reads the records at or below name (the apex's own live at
// apex.dns.<zone>, and the synthesized name server has addresses).
func kindsAt(snap *snapshot.Snapshot, name string, apex bool) kinds {
	k := kinds{apex: apex}
	if apex {
		name = "apex.dns." + name
	}
	if strings.HasPrefix(name, "ns.dns.") {
		k.ipv4, k.ipv6 = true, true
	}
	for _, e := range snap.Lookup(name) {
		k.ipv4 = k.ipv4 || len(e.IP) == 4
		k.ipv6 = k.ipv6 || len(e.IP) == 16
		k.text = k.text || e.Record.Text != ""
		k.host = k.host || e.Record.Host != ""
		k.mail = k.mail || e.Record.Mail
	}
	return k
}

// may reports whether a qtype question may have an answer.
func (k kinds) may(qtype uint16) bool {
	switch qtype {
	case dns.TypeNS:
		return k.apex
	case dns.TypeA:
		return k.ipv4
	case dns.TypeAAAA:
		return k.ipv6
	case dns.TypeTXT:
		return k.text
	case dns.TypeMX:
		return k.mail
	}
	return k.host // SRV, PTR, CNAME
}

// servesPorts reports whether rrs hold an MX record or an SRV record with
// a port.
func servesPorts(rrs []dns.RR) bool {
	for _, rr := range rrs {
		switch rr := rr.(type) {
		case *dns.MX:
			return true
		case *dns.SRV:
			if rr.Port != 0 {
				return true
			}
		}
	}
	return false
}

// ask is the answer section of the resolver's answer to name and qtype.
func ask(res *resolver.Resolver, snap *snapshot.Snapshot, name string, qtype uint16) []dns.RR {
	return res.Resolve(snap, new(dns.Msg).SetQuestion(name, qtype)).Answer
}

// owned keeps the records of rrs that name owns with type qtype (a CNAME
// chain's later records belong to other names).
func owned(rrs []dns.RR, name string, qtype uint16) []dns.RR {
	out := rrs[:0]
	for _, rr := range rrs {
		if h := rr.Header(); h.Rrtype == qtype && h.Name == name {
			out = append(out, rr)
		}
	}
	return out
}

// parent is name without its first label; false for the root.
func parent(name string) (string, bool) {
	i := strings.IndexByte(name, '.')
	if i < 0 || i == len(name)-1 {
		return "", false
	}
	return name[i+1:], true
}

// valid reports whether name can own records in a zone: a domain name
// with no wildcard label.
func valid(name string) bool {
	if _, ok := dns.IsDomainName(name); !ok {
		return false
	}
	for _, label := range contract.Labels(name) {
		if contract.IsWildcard(label) {
			return false
		}
	}
	return true
}
