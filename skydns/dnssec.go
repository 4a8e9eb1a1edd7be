package skydns

import (
	"fmt"
	"slices"
	"sync"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/skydns/dnssec"
	"github.com/kubesky/kubesky/skydns/resolver"
	"github.com/kubesky/kubesky/skydns/snapshot"
)

// loadDNSSECKeys reads the --dnssec-key files and checks that each names
// a served zone.
func (c *Config) loadDNSSECKeys() error {
	c.dnssecKeys = nil
	if len(c.DNSSECKeys) == 0 {
		return nil
	}
	keys, err := dnssec.ReadKeys(c.DNSSECKeys)
	if err != nil {
		return fmt.Errorf("--dnssec-key: %w", err)
	}
	served := append(slices.Clone(c.Zones), resolver.ReverseZone4, resolver.ReverseZone6)
	for _, k := range keys {
		if !slices.Contains(served, k.Zone()) {
			return fmt.Errorf("--dnssec-key: the key of %s (tag %d) is for no zone served (%v)", k.Zone(), k.DNSKEY.KeyTag(), served)
		}
	}
	c.dnssecKeys = keys
	return nil
}

// newSigner is the signer of the zones with --dnssec-key keys; nil
// without keys.
func (c *Config) newSigner() (*dnssec.Signer, error) {
	if len(c.DNSSECKeys) > 0 && c.dnssecKeys == nil {
		if err := c.loadDNSSECKeys(); err != nil {
			return nil, err
		}
	}
	if len(c.dnssecKeys) == 0 {
		return nil, nil
	}
	return dnssec.New(dnssec.Config{Keys: c.dnssecKeys}), nil
}

// signAnswer finishes resp, the answer to req from snap in zone, with
// DNSSEC when zone is signed (see dnssec.Signer.Apply), and reports
// whether it is. visit, if not nil, sees every name the denial read (as
// resolver.ResolveIn's visit).
func signAnswer(s *dnssec.Signer, names *zoneNames, resp, req *dns.Msg, snap *snapshot.Snapshot, zone resolver.ZoneMatch,
	visit func(string)) bool {
	if s == nil || !s.Signs(zone.Name()) {
		return false
	}
	s.Apply(resp, req, zone.Name(), names.in(snap, zone, visit))
	return true
}

// typesAtName are the types whose presence at a name the NSEC3 bitmaps
// report: every type the resolver answers.
var typesAtName = []uint16{dns.TypeA, dns.TypeNS, dns.TypeCNAME, dns.TypeSOA, dns.TypePTR, dns.TypeMX,
	dns.TypeTXT, dns.TypeAAAA, dns.TypeSRV}

// zoneNames answers dnssec.Names from the resolver over one snapshot,
// remembering the answers until the snapshot changes (a denial reads the
// same closest enclosers again and again).
type zoneNames struct {
	resolver *resolver.Resolver
	mu       sync.Mutex // guards the fields below
	rev      int64
	exists   map[string]bool
	types    map[string][]uint16
}

// maxRemembered bounds each of zoneNames' maps.
const maxRemembered = 10000

func newZoneNames(res *resolver.Resolver) *zoneNames {
	return &zoneNames{resolver: res, exists: make(map[string]bool), types: make(map[string][]uint16)}
}

// in is the view of snap's zone; visit, if not nil, sees every name asked
// about.
func (n *zoneNames) in(snap *snapshot.Snapshot, zone resolver.ZoneMatch, visit func(string)) dnssec.Names {
	return snapNames{n: n, snap: snap, zone: zone, visit: visit}
}

// at empties zoneNames' maps when rev is a new revision; n.mu must be
// held.
func (n *zoneNames) at(rev int64) {
	if n.rev != rev {
		n.rev = rev
		clear(n.exists)
		clear(n.types)
	}
}

func (n *zoneNames) knownExists(rev int64, name string) (exists, ok bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.at(rev)
	exists, ok = n.exists[name]
	return exists, ok
}

func (n *zoneNames) knownTypes(rev int64, name string) (types []uint16, ok bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.at(rev)
	types, ok = n.types[name]
	return types, ok
}

func (n *zoneNames) rememberExists(rev int64, name string, exists bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.at(rev); len(n.exists) < maxRemembered {
		n.exists[name] = exists
	}
}

func (n *zoneNames) rememberTypes(rev int64, name string, types []uint16) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.at(rev); len(n.types) < maxRemembered {
		n.types[name] = types
	}
}

// snapNames is zoneNames over one snapshot and zone.
type snapNames struct {
	n     *zoneNames
	snap  *snapshot.Snapshot
	zone  resolver.ZoneMatch
	visit func(string)
}

// Exists reports whether name has records at or below it: a question for
// it is not NXDOMAIN.
func (s snapNames) Exists(name string) bool {
	s.visited(name)
	rev := s.snap.Revision()
	if exists, ok := s.n.knownExists(rev, name); ok {
		return exists
	}
	exists := s.resolve(name, dns.TypeTXT).Rcode != dns.RcodeNameError
	s.n.rememberExists(rev, name, exists)
	return exists
}

// Types are the types of the records the resolver answers at name itself.
func (s snapNames) Types(name string) []uint16 {
	s.visited(name)
	rev := s.snap.Revision()
	if types, ok := s.n.knownTypes(rev, name); ok {
		return types
	}
	var types []uint16
	for _, t := range typesAtName {
		if s.has(name, t) {
			types = append(types, t)
		}
	}
	s.n.rememberTypes(rev, name, types)
	return types
}

func (s snapNames) visited(name string) {
	if s.visit != nil {
		s.visit(name)
	}
}

// has reports whether the answer for name and t has a record of type t
// owned by name.
func (s snapNames) has(name string, t uint16) bool {
	for _, rr := range s.resolve(name, t).Answer {
		if h := rr.Header(); h.Rrtype == t && dns.CanonicalName(h.Name) == name {
			return true
		}
	}
	return false
}

func (s snapNames) resolve(name string, t uint16) *dns.Msg {
	req := new(dns.Msg)
	req.Question = []dns.Question{{Name: name, Qtype: t, Qclass: dns.ClassINET}}
	resp, _ := s.n.resolver.ResolveIn(s.snap, s.zone, req, nil)
	return resp
}
