package records

import (
	"net/netip"
	"strings"

	"github.com/kubesky/kubesky/contract"
)

// DNSSchemaVersion is the version of the Kubernetes DNS specification the
// records implement, published in the zone's dns-version TXT record.
const DNSSchemaVersion = "1.1.0"

// Zone is where and how records are written: the cluster domain, the etcd key
// prefix, the TTL and the owner stamped on every value.
type Zone struct {
	domain    string // "cluster.local." lower case, fully qualified
	svcDomain string // "svc.cluster.local."
	prefix    string // "/skydns"
	zoneKey   string // "/skydns/local/cluster"
	svcKey    string // "/skydns/local/cluster/svc/"
	arpaKey   string // "/skydns/arpa/"
	ttl       uint32
	owner     string
	podNames  bool // endpoints without a hostname named by their pod
	// ignoreEmpty: a cluster IP Service without a ready endpoint has no records
	ignoreEmpty bool
	exposed     map[string]bool // the namespaces whose Services have records; nil: all
}

// NewZone returns the zone for a cluster domain ("cluster.local") under an
// etcd prefix ("/skydns"). The domain is expected to be valid (see
// ValidDomain).
func NewZone(domain, prefix string, ttl uint32, owner string) Zone {
	domain = strings.ToLower(strings.TrimSuffix(domain, ".")) + "."
	prefix = strings.TrimSuffix(prefix, "/")
	zoneKey := contract.Key(prefix, domain)
	return Zone{
		domain:    domain,
		svcDomain: "svc." + domain,
		prefix:    prefix,
		zoneKey:   zoneKey,
		svcKey:    zoneKey + "/svc/",
		arpaKey:   prefix + "/arpa/",
		ttl:       ttl,
		owner:     owner,
	}
}

// WithEndpointPodNames returns z naming an endpoint without a hostname by
// its pod's name, where that is a DNS label, rather than by its dashed
// address (CoreDNS's endpoint_pod_names).
func (z Zone) WithEndpointPodNames() Zone {
	z.podNames = true
	return z
}

// WithEmptyServicesIgnored returns z writing no records for a cluster IP
// Service without a ready endpoint, so that its name is NXDOMAIN and a
// client's search path goes on (CoreDNS's ignore empty_service).
func (z Zone) WithEmptyServicesIgnored() Zone {
	z.ignoreEmpty = true
	return z
}

// WithNamespaces returns z writing the records of the Services of these
// namespaces only (CoreDNS's namespaces).
func (z Zone) WithNamespaces(namespaces []string) Zone {
	z.exposed = make(map[string]bool, len(namespaces))
	for _, ns := range namespaces {
		z.exposed[ns] = true
	}
	return z
}

// Exposes says whether the Services of a namespace have records.
func (z Zone) Exposes(namespace string) bool { return z.exposed == nil || z.exposed[namespace] }

// IgnoresEmptyServices says whether cluster IP Services need a ready
// endpoint to have records, and so their EndpointSlices.
func (z Zone) IgnoresEmptyServices() bool { return z.ignoreEmpty }

// EndpointPodNames says whether endpoints are named by their pods.
func (z Zone) EndpointPodNames() bool { return z.podNames }

// Domain returns the cluster domain as a fully qualified name.
func (z Zone) Domain() string { return z.domain }

// Prefix returns the etcd key prefix.
func (z Zone) Prefix() string { return z.prefix }

// Owner returns the owner stamped on every record.
func (z Zone) Owner() string { return z.owner }

// ZoneKeyPrefix returns the key prefix every forward record lives under,
// "/skydns/local/cluster/".
func (z Zone) ZoneKeyPrefix() string { return z.zoneKey + "/" }

// ReverseKeyPrefix returns the key prefix of every PTR record, "/skydns/arpa/".
func (z Zone) ReverseKeyPrefix() string { return z.arpaKey }

// IsReverseKey reports whether key is a PTR record's key.
func (z Zone) IsReverseKey(key string) bool { return strings.HasPrefix(key, z.arpaKey) }

// ServiceKeyPrefix returns the key prefix of every record of one Service,
// "/skydns/local/cluster/svc/<ns>/<name>/".
func (z Zone) ServiceKeyPrefix(namespace, name string) string {
	return z.svcKey + namespace + "/" + name + "/"
}

// ServiceFQDN returns "<name>.<ns>.svc.<zone>.".
func (z Zone) ServiceFQDN(namespace, name string) string {
	return name + "." + namespace + "." + z.svcDomain
}

// ServiceOfKey returns the Service a forward record's key belongs to: the
// two labels after svc/ when at least one more follows.
func (z Zone) ServiceOfKey(key string) (namespace, name string, ok bool) {
	rest, found := strings.CutPrefix(key, z.svcKey)
	if !found {
		return "", "", false
	}
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) < 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// ServiceOfTarget returns the Service a PTR target names:
// "<name>.<ns>.svc.<zone>." or "<label>.<name>.<ns>.svc.<zone>.".
func (z Zone) ServiceOfTarget(host string) (namespace, name string, ok bool) {
	rest, found := strings.CutSuffix(strings.ToLower(host), "."+z.svcDomain)
	if !found {
		return "", "", false
	}
	labels := strings.Split(rest, ".")
	n := len(labels)
	if n < 2 || n > 3 || labels[n-1] == "" || labels[n-2] == "" {
		return "", "", false
	}
	return labels[n-1], labels[n-2], true
}

// ReverseKey returns the PTR key of an address.
func (z Zone) ReverseKey(addr netip.Addr) string {
	return contract.ReverseKey(z.prefix, addr)
}

// DNSVersionKey returns the key of the zone's dns-version record.
func (z Zone) DNSVersionKey() string { return z.zoneKey + "/dns-version" }

// DNSVersion returns the zone's dns-version TXT record.
func (z Zone) DNSVersion() Entry {
	return Entry{Key: z.DNSVersionKey(), Record: z.record(contract.Record{Text: DNSSchemaVersion})}
}

// record stamps the zone's TTL and owner on r.
func (z Zone) record(r contract.Record) contract.Record {
	r.TTL = z.ttl
	r.Owner = z.owner
	return r
}
