package dnssec

import (
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"
)

// DNSKEYTTL is the TTL of the DNSKEY RRset.
const DNSKEYTTL = 3600

// keyBufSize is the scratch space rrsetKey packs one record into; a
// larger record is signed for each answer, not kept.
const keyBufSize = 2048

// Default signature timing: valid from an hour ago (clocks differ) for a
// week, made again after half of that.
const (
	DefaultValidity = 7 * 24 * time.Hour
	inceptionSkew   = time.Hour
)

// Names tells the denial what exists in a zone, as the snapshot the
// response was made from has it.
type Names interface {
	// Exists reports whether name has records at or below it.
	Exists(name string) bool
	// Types are the types of the RRsets at name.
	Types(name string) []uint16
}

// Config is a Signer's keys and timing.
type Config struct {
	Keys []Key
	// Validity is how long a signature is valid (DefaultValidity if
	// zero); it is made again when half of it has passed.
	Validity time.Duration
	// Now is the clock (time.Now if nil).
	Now func() time.Time
}

// Signer signs the answers of the zones it has keys for. It is safe for
// concurrent use.
type Signer struct {
	zones    map[string]*zoneKeys
	cache    *sigCache
	validity time.Duration
	now      func() time.Time
	signed   atomic.Uint64 // RRsets signed, for tests and metrics
}

// zoneKeys are one zone's DNSKEY RRset and who signs what.
type zoneKeys struct {
	dnskeys []dns.RR
	keySign []Key // sign the DNSKEY RRset
	zoneSig []Key // sign every other RRset
}

// New returns a Signer for the zones of cfg.Keys.
func New(cfg Config) *Signer {
	s := &Signer{zones: make(map[string]*zoneKeys), cache: newSigCache(), validity: cfg.Validity, now: cfg.Now}
	if s.validity <= 0 {
		s.validity = DefaultValidity
	}
	if s.now == nil {
		s.now = time.Now
	}
	byZone := make(map[string][]Key)
	for _, k := range cfg.Keys {
		byZone[k.Zone()] = append(byZone[k.Zone()], k)
	}
	for zone, keys := range byZone {
		s.zones[zone] = newZoneKeys(zone, keys)
	}
	return s
}

func newZoneKeys(zone string, keys []Key) *zoneKeys {
	z := &zoneKeys{}
	for _, k := range keys {
		pub := *k.DNSKEY
		pub.Hdr = dns.RR_Header{Name: zone, Rrtype: dns.TypeDNSKEY, Class: dns.ClassINET, Ttl: DNSKEYTTL}
		z.dnskeys = append(z.dnskeys, &pub)
	}
	ksk := slices.DeleteFunc(slices.Clone(keys), func(k Key) bool { return !k.SEP() })
	zsk := slices.DeleteFunc(slices.Clone(keys), Key.SEP)
	z.keySign, z.zoneSig = orAll(ksk, keys), orAll(zsk, keys)
	return z
}

// orAll is some, or all when some is empty.
func orAll(some, all []Key) []Key {
	if len(some) == 0 {
		return all
	}
	return some
}

// Zones are the zones the Signer has keys for, lower case.
func (s *Signer) Zones() []string {
	zones := make([]string, 0, len(s.zones))
	for z := range s.zones {
		zones = append(zones, z)
	}
	slices.Sort(zones)
	return zones
}

// KeyTags are the tags of the keys of every zone, in the order of Zones.
func (s *Signer) KeyTags() [][]uint16 {
	var tags [][]uint16
	for _, zone := range s.Zones() {
		var zt []uint16
		for _, k := range s.zones[zone].dnskeys {
			zt = append(zt, k.(*dns.DNSKEY).KeyTag())
		}
		tags = append(tags, zt)
	}
	return tags
}

// Signs reports whether zone (lower case, fully qualified) is signed.
func (s *Signer) Signs(zone string) bool { return s.zones[zone] != nil }

// Validity is how long a signature is valid from when it is made.
func (s *Signer) Validity() time.Duration { return s.validity }

// Signed is how many RRsets the Signer has signed (cache misses).
func (s *Signer) Signed() uint64 { return s.signed.Load() }

// WantsDNSSEC reports whether req set the DO bit.
func WantsDNSSEC(req *dns.Msg) bool {
	opt := req.IsEdns0()
	return opt != nil && opt.Do()
}

// Apply finishes resp, the resolver's answer to req in zone: the DNSKEY
// RRset answers a DNSKEY question at the apex; with the DO bit, the
// denial is proven and every RRset of the zone is signed. A zone without
// keys is left as it is. resp's section slices are replaced, never
// written to.
func (s *Signer) Apply(resp, req *dns.Msg, zone string, names Names) {
	z := s.zones[zone]
	if z == nil || len(req.Question) != 1 {
		return
	}
	q := req.Question[0]
	if q.Qtype == dns.TypeDNSKEY && strings.EqualFold(q.Name, zone) && resp.Rcode == dns.RcodeSuccess {
		resp.Answer, resp.Ns = slices.Clone(z.dnskeys), nil
	}
	if !WantsDNSSEC(req) {
		return
	}
	resp.Ns = s.deny(resp, q, zone, names)
	now := s.now()
	resp.Answer = s.signSection(resp.Answer, zone, z, now)
	resp.Ns = s.signSection(resp.Ns, zone, z, now)
	resp.Extra = s.signSection(resp.Extra, zone, z, now)
}

// signSection returns rrs grouped by RRset, each of the zone's RRsets
// followed by its signatures. Records outside the zone (the forwarder's),
// OPT and RRSIG records are kept unsigned.
func (s *Signer) signSection(rrs []dns.RR, zone string, z *zoneKeys, now time.Time) []dns.RR {
	if len(rrs) == 0 {
		return rrs
	}
	out := make([]dns.RR, 0, 2*len(rrs))
	buf := make([]byte, keyBufSize)
	for _, set := range rrsets(rrs) {
		out = append(out, set...)
		if signable(set[0], zone) {
			out = append(out, s.sigs(set, zone, z, now, buf)...)
		}
	}
	return out
}

// signable reports whether rr's RRset is the zone's to sign.
func signable(rr dns.RR, zone string) bool {
	switch rr.Header().Rrtype {
	case dns.TypeOPT, dns.TypeRRSIG:
		return false
	}
	return dns.IsSubDomain(zone, rr.Header().Name) // case-insensitive
}

// rrsets splits rrs into RRsets (owner, ignoring case, and type), in the
// order of their first records.
func rrsets(rrs []dns.RR) [][]dns.RR {
	var sets [][]dns.RR
next:
	for _, rr := range rrs {
		h := rr.Header()
		for i, set := range sets {
			h0 := set[0].Header()
			if h0.Rrtype == h.Rrtype && h0.Class == h.Class && strings.EqualFold(h0.Name, h.Name) {
				sets[i] = append(set, rr)
				continue next
			}
		}
		sets = append(sets, []dns.RR{rr})
	}
	return sets
}

// sigs returns the signatures of set, from the cache or made now, with
// the set's owner name and TTL.
func (s *Signer) sigs(set []dns.RR, zone string, z *zoneKeys, now time.Time, buf []byte) []dns.RR {
	key := rrsetKey(set, buf)
	sigs, ok := s.cache.get(key, now)
	if !ok {
		sigs = s.sign(set, zone, z, now)
		if key != "" {
			s.cache.put(key, cached{sigs: sigs, refresh: now.Add(s.validity / 2)})
		}
	}
	out := make([]dns.RR, len(sigs))
	for i, sig := range sigs {
		c := *sig
		c.Hdr.Name, c.Hdr.Ttl = set[0].Header().Name, set[0].Header().Ttl
		out[i] = &c
	}
	return out
}

// sign makes set's signatures, one per signing key.
func (s *Signer) sign(set []dns.RR, zone string, z *zoneKeys, now time.Time) []*dns.RRSIG {
	s.signed.Add(1)
	keys := z.zoneSig
	if set[0].Header().Rrtype == dns.TypeDNSKEY {
		keys = z.keySign
	}
	sigs := make([]*dns.RRSIG, 0, len(keys))
	for _, k := range keys {
		sig := &dns.RRSIG{Algorithm: k.DNSKEY.Algorithm, KeyTag: k.DNSKEY.KeyTag(), SignerName: zone,
			Inception: uint32(now.Add(-inceptionSkew).Unix()), Expiration: uint32(now.Add(s.validity).Unix())}
		if err := sig.Sign(k.Signer, set); err == nil {
			sigs = append(sigs, sig)
		}
	}
	return sigs
}
