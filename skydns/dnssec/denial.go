package dnssec

import (
	"crypto/sha1"
	"encoding/base32"
	"slices"
	"strings"

	"github.com/miekg/dns"
)

// b32 is base32hex in lower case without padding: NSEC3 owner labels.
var b32 = base32.NewEncoding("0123456789abcdefghijklmnopqrstuv").WithPadding(base32.NoPadding)

// deny returns resp's authority section with the NSEC3 records that prove
// its denial: NXDOMAIN or NODATA (an empty NOERROR answer with the SOA).
// Other answers keep theirs.
func (s *Signer) deny(resp *dns.Msg, q dns.Question, zone string, names Names) []dns.RR {
	soa := negativeSOA(resp)
	if soa == nil || len(resp.Answer) != 0 || names == nil {
		return resp.Ns
	}
	ttl := min(soa.Hdr.Ttl, soa.Minttl)
	qname := strings.ToLower(q.Name)
	var proof []dns.RR
	switch resp.Rcode {
	case dns.RcodeSuccess:
		proof = []dns.RR{matching(qname, zone, s.types(qname, zone, names), ttl)}
	case dns.RcodeNameError:
		proof = s.nxdomain(qname, zone, names, ttl)
	default:
		return resp.Ns
	}
	return append(slices.Clip(resp.Ns), proof...)
}

// negativeSOA is the zone's SOA in resp's authority section, or nil.
func negativeSOA(resp *dns.Msg) *dns.SOA {
	for _, rr := range resp.Ns {
		if soa, ok := rr.(*dns.SOA); ok {
			return soa
		}
	}
	return nil
}

// nxdomain proves that qname does not exist: its closest encloser exists
// (a matching NSEC3), and neither the next closer name nor the wildcard at
// the closest encloser does (two covering NSEC3).
func (s *Signer) nxdomain(qname, zone string, names Names, ttl uint32) []dns.RR {
	ce, next := closestEncloser(qname, zone, names)
	return []dns.RR{
		matching(ce, zone, s.types(ce, zone, names), ttl),
		covering(next, zone, ttl),
		covering("*."+ce, zone, ttl),
	}
}

// closestEncloser is the longest ancestor of qname that exists, at most
// the zone's apex, and the name one label longer on the way to qname.
func closestEncloser(qname, zone string, names Names) (ce, next string) {
	next = qname
	for {
		_, parent, _ := strings.Cut(next, ".")
		if parent == "" || len(parent) <= len(zone) || names.Exists(parent) {
			if len(parent) < len(zone) {
				parent = zone
			}
			return parent, next
		}
		next = parent
	}
}

// types are the RRset types at name for an NSEC3 bitmap: what names has,
// DNSKEY at the apex, and RRSIG when there is any.
func (s *Signer) types(name, zone string, names Names) []uint16 {
	types := slices.Clone(names.Types(name))
	if name == zone {
		types = append(types, dns.TypeDNSKEY)
	}
	if len(types) > 0 {
		types = append(types, dns.TypeRRSIG)
	}
	slices.Sort(types)
	return slices.Compact(types)
}

// matching is the NSEC3 record of name itself, with its types.
func matching(name, zone string, types []uint16, ttl uint32) *dns.NSEC3 {
	h := hash(name)
	return nsec3(h, increment(h), zone, types, ttl)
}

// covering is an NSEC3 record whose interval holds only name's hash: from
// one below it to one above.
func covering(name, zone string, ttl uint32) *dns.NSEC3 {
	h := hash(name)
	return nsec3(decrement(h), increment(h), zone, nil, ttl)
}

func nsec3(owner, next []byte, zone string, types []uint16, ttl uint32) *dns.NSEC3 {
	return &dns.NSEC3{
		Hdr:  dns.RR_Header{Name: b32.EncodeToString(owner) + "." + zone, Rrtype: dns.TypeNSEC3, Class: dns.ClassINET, Ttl: ttl},
		Hash: dns.SHA1, HashLength: sha1.Size, NextDomain: strings.ToUpper(b32.EncodeToString(next)),
		TypeBitMap: types,
	}
}

// hash is the NSEC3 hash of name: SHA-1 of its canonical wire form, with
// no salt and no extra iterations (RFC 9276).
func hash(name string) []byte {
	wire := make([]byte, 256)
	n, _ := dns.PackDomainName(dns.CanonicalName(name), wire, 0, nil, false)
	sum := sha1.Sum(wire[:n])
	return sum[:]
}

// increment is h+1 as a big-endian number (wrapping).
func increment(h []byte) []byte {
	out := slices.Clone(h)
	for i := len(out) - 1; i >= 0; i-- {
		out[i]++
		if out[i] != 0 {
			break
		}
	}
	return out
}

// decrement is h-1 as a big-endian number (wrapping).
func decrement(h []byte) []byte {
	out := slices.Clone(h)
	for i := len(out) - 1; i >= 0; i-- {
		out[i]--
		if out[i] != 0xff {
			break
		}
	}
	return out
}
