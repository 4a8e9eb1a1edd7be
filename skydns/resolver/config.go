package resolver

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/contract"
)

// The reverse zones are always served, in addition to Config.Zones.
const (
	ReverseZone4 = "in-addr.arpa."
	ReverseZone6 = "ip6.arpa."
)

// DefaultTTL is the TTL of records that carry none, when Config.TTL is 0.
const DefaultTTL = 30

// DefaultMaxTTL caps every TTL served when Config.MaxTTL is 0: an hour,
// as CoreDNS's cache. Kubernetes records change as pods come and go, and a
// record written with a TTL of days would outlive them in clients' caches.
const DefaultMaxTTL = 3600

// Config says what a Resolver serves.
type Config struct {
	// Zones are the forward zones served, e.g. "cluster.local.". They are
	// made fully qualified and lower case; the reverse zones are added.
	Zones []string
	// Prefix is the etcd prefix of the snapshots (default "/skydns"). It is
	// needed to turn a record's key back into a name (SRV targets).
	Prefix string
	// TTL is the TTL of records that carry none, of the SOA and of negative
	// answers (default DefaultTTL).
	TTL uint32
	// Priority is the SRV priority and MX preference of records that carry
	// none (nil: DefaultPriority, as SkyDNS, kube-dns and the Kubernetes
	// DNS specification; CoreDNS's kubernetes plugin answers 0).
	Priority *uint16
	// MaxTTL caps every TTL served, records', the SOA's and negative
	// answers' alike (default DefaultMaxTTL).
	MaxTTL uint32
	// Pods says how names under pod.<first zone> are answered (default
	// PodsDisabled); see PodMode.
	Pods PodMode
	// PodNamespaces, if any, are the only namespaces whose pod names exist
	// (CoreDNS's namespaces option); the others' are NXDOMAIN.
	PodNamespaces []string
	// NSAddrs are the addresses of the DNS Service (the kube-dns
	// ClusterIPs). When no record lives at or below ns.dns.<zone>, every
	// zone's apex has the NS record ns.dns.<zone>, which answers A and
	// AAAA with these addresses.
	NSAddrs []netip.Addr
	// Version answers version.bind. TXT in class CH; Hostname answers
	// hostname.bind. and id.server. there. Empty: REFUSED, as every other
	// CH question.
	Version, Hostname string
}

// Resolver answers questions for its zones. It holds only its
// configuration and is safe for concurrent use.
type Resolver struct {
	zones           []*zone // longest first
	prefix          string
	ttl             uint32 // at most maxTTL
	defaultPriority uint16 // of records that carry none
	maxTTL          uint32
	pods            PodMode
	podZone         string   // "pod.<first zone>", "" when the first zone is a reverse zone
	podNamespaces   []string // the only namespaces with pod names; nil: every one
	nsAddrs         []netip.Addr
	version         string // version.bind. CH TXT
	hostname        string // hostname.bind. and id.server. CH TXT
}

// zone is one served zone and the names derived from it.
type zone struct {
	name    string // fqdn, lower case
	mname   string // SOA primary server: ns.dns.<zone>
	rname   string // SOA mailbox: hostmaster.<zone>
	apex    string // where the apex's own records live: apex.dns.<zone>
	ns      string // where the zone's name servers live: ns.dns.<zone>
	reverse bool   // in-addr.arpa. or ip6.arpa.: only PTR data
}

// New validates cfg and returns a Resolver.
func New(cfg Config) (*Resolver, error) {
	r := &Resolver{prefix: strings.TrimSuffix(cfg.Prefix, "/"), ttl: cfg.TTL, nsAddrs: slices.Clone(cfg.NSAddrs),
		version: cfg.Version, hostname: cfg.Hostname, podNamespaces: slices.Clone(cfg.PodNamespaces)}
	if r.prefix == "" {
		r.prefix = contract.DefaultPrefix
	}
	if r.ttl == 0 {
		r.ttl = DefaultTTL
	}
	if r.maxTTL = cfg.MaxTTL; r.maxTTL == 0 {
		r.maxTTL = DefaultMaxTTL
	}
	r.ttl = min(r.ttl, r.maxTTL)
	r.defaultPriority = DefaultPriority
	if cfg.Priority != nil {
		r.defaultPriority = *cfg.Priority
	}
	zones, err := newZones(cfg.Zones)
	if err != nil {
		return nil, err
	}
	r.zones = zones
	if r.pods, err = ParsePodMode(string(cfg.Pods)); err != nil {
		return nil, err
	}
	if first, _ := newZone(cfg.Zones[0]); !first.reverse {
		r.podZone = "pod." + first.name
	}
	return r, nil
}

func newZones(names []string) ([]*zone, error) {
	if len(names) == 0 {
		return nil, errors.New("no zone configured")
	}
	seen := map[string]bool{}
	var zones []*zone
	for _, n := range append(append([]string(nil), names...), ReverseZone4, ReverseZone6) {
		z, err := newZone(n)
		if err != nil {
			return nil, err
		}
		if !seen[z.name] {
			seen[z.name] = true
			zones = append(zones, z)
		}
	}
	sort.SliceStable(zones, func(i, j int) bool { return len(zones[i].name) > len(zones[j].name) })
	return zones, nil
}

func newZone(name string) (*zone, error) {
	fqdn := dns.Fqdn(strings.ToLower(strings.TrimSpace(name)))
	if _, ok := dns.IsDomainName(fqdn); !ok || fqdn == "." || strings.ContainsAny(fqdn, `/\ `) || strings.Contains(fqdn, "..") {
		return nil, fmt.Errorf("zone %q: not a valid domain name", name)
	}
	return &zone{
		name:    fqdn,
		mname:   "ns.dns." + fqdn,
		rname:   "hostmaster." + fqdn,
		apex:    contract.ApexName(fqdn),
		ns:      "ns.dns." + fqdn,
		reverse: fqdn == ReverseZone4 || fqdn == ReverseZone6,
	}, nil
}

// Zones returns the zones served, longest first.
func (r *Resolver) Zones() []string {
	out := make([]string, len(r.zones))
	for i, z := range r.zones {
		out[i] = z.name
	}
	return out
}

// Zone returns the served zone qname is in: the longest that matches.
func (r *Resolver) Zone(qname string) (string, bool) {
	if z := r.findZone(qname); z != nil {
		return z.name, true
	}
	return "", false
}

func (r *Resolver) findZone(qname string) *zone {
	for _, z := range r.zones {
		if isSubdomain(z.name, qname) {
			return z
		}
	}
	return nil
}
