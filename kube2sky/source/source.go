package source

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/kube2sky/group"
	"github.com/kubesky/kubesky/kube2sky/records"
)

// Config is what the cluster's side is told.
type Config struct {
	Zone   records.Zone
	Prefix string // the etcd key prefix of the records
	TTL    uint32 // of every record, in seconds
	Owner  string // stamped on every record
	// VerifiedPods writes a record per pod address (--pod-records=verified).
	VerifiedPods bool
	// HostsConfigMap, HostsDomain, KubeDNSConfigMap and DNSService are the
	// flags of the same names; "" for none.
	HostsConfigMap, HostsDomain, KubeDNSConfigMap, DNSService string
}

// hostsDomainPrefix returns the key prefix of the --hosts-domain records,
// "" when there is no such domain.
func (c Config) hostsDomainPrefix() string {
	if c.HostsDomain == "" {
		return ""
	}
	return contract.Key(c.Prefix, c.HostsDomain) + "/"
}

// Metrics are the metrics the reports of bad objects count in.
type Metrics struct {
	InvalidObjects    *prometheus.CounterVec // newly seen problems, by kind
	HostsInvalidLines prometheus.Gauge       // the hosts ConfigMap's lines skipped
	HostsRecords      prometheus.Gauge       // the records the hosts ConfigMap yields
}

// Source is what the cluster says: the informers, their caches and the
// record groups built from them.
type Source struct {
	kube      kubernetes.Interface // for events
	zone      records.Zone
	informers informerSet
	problems  *problemLog
	services  *serviceGroups
	pods      *podGroups
	hosts     *hostsGroup
	kubeDNS   *kubeDNSGroup              // nil without --kube-dns-configmap
	names     *nameServerGroup           // nil without --dns-service
	groups    [group.Pod + 1]recordGroup // by kind; nil for the zone and for a kind not configured
}

// New sets up every kind of group and the informers they need; changed
// hears of each group whose records went stale, with the time of the
// change (zero: now).
func New(kube kubernetes.Interface, cfg Config, m Metrics, log *slog.Logger, changed func(group.Key, time.Time)) (*Source, error) {
	s := &Source{kube: kube, zone: cfg.Zone}
	s.problems = newProblemLog(log, m.InvalidObjects, func(kind, key string) *corev1.ObjectReference {
		return s.services.objectRef(kind, key)
	})
	var err error
	if s.services, err = newServiceGroups(kube, &s.informers, cfg.Zone, s.problems, changed); err != nil {
		return nil, err
	}
	if s.pods, err = newPodGroups(kube, &s.informers, cfg, changed); err != nil {
		return nil, err
	}
	if s.kubeDNS, err = newKubeDNSGroup(kube, &s.informers, cfg, log, changed); err != nil {
		return nil, err
	}
	if s.hosts, err = newHostsGroup(kube, &s.informers, cfg, m, log, changed); err != nil {
		return nil, err
	}
	if s.names, err = newNameServerGroup(s.services, cfg, log, changed); err != nil {
		return nil, err
	}
	s.groups[group.Service], s.groups[group.Pod], s.groups[group.Hosts] = s.services, s.pods, s.hosts
	if s.kubeDNS != nil {
		s.groups[group.KubeDNS] = s.kubeDNS
	}
	if s.names != nil {
		s.groups[group.NameServer] = s.names
	}
	return s, nil
}

// Run starts the event recorder and the informers; they stop when ctx
// ends, and wg waits for them.
func (s *Source) Run(ctx context.Context, wg *sync.WaitGroup) {
	s.startEvents(ctx, wg)
	s.informers.run(ctx, wg)
}

// WaitForSync waits until the informers have listed everything; false
// when ctx ended first.
func (s *Source) WaitForSync(ctx context.Context) bool {
	return cache.WaitForCacheSync(ctx.Done(), s.informers.synced...)
}

// ServiceCount returns how many Services are cached.
func (s *Source) ServiceCount() int { return s.services.count() }

// recordGroup is one kind of group: it says what records a group should
// have, and where in etcd its records are.
type recordGroup interface {
	// desired returns the records of the group called name; a group whose
	// objects are gone has none.
	desired(name string) group.Desired
	// scope returns the keys etcd holds the group called name under.
	scope(name string) group.Scope
	// prefixes returns the key prefixes every group of the kind lives under.
	prefixes() []string
	// groupOfKey returns the group a forward key under prefixes belongs to;
	// ok is false for a key not of this kind.
	groupOfKey(key string) (group group.Key, ok bool)
}

// wholeKind is a kind whose groups a full reconcile builds all at once
// (EachWhole): every kind but the pod addresses, which are too many for
// that and have a pass of their own.
type wholeKind interface {
	recordGroup
	// eachDesired calls fn with every group of the kind the caches know and
	// its records.
	eachDesired(fn func(name string, d group.Desired))
}

// Desired returns the records a group should have, from the caches.
func (s *Source) Desired(key group.Key) group.Desired {
	if g := s.groups[key.Kind]; g != nil {
		return g.desired(key.Name)
	}
	return group.Desired{}
}

// Scope returns where etcd holds a group's keys.
func (s *Source) Scope(key group.Key) group.Scope {
	if g := s.groups[key.Kind]; g != nil {
		return g.scope(key.Name)
	}
	return group.Scope{}
}

// EachWhole calls fn with every group the caches know but the pod
// addresses, and its records.
func (s *Source) EachWhole(fn func(key group.Key, d group.Desired)) {
	for kind, g := range s.groups {
		g, ok := g.(wholeKind)
		if !ok {
			continue
		}
		g.eachDesired(func(name string, d group.Desired) {
			fn(group.Key{Kind: group.Kind(kind), Name: name}, d)
		})
	}
}

// GroupOf returns the group a key under the zone (or another prefix of a
// group) belongs to: the zone group when it is no other's.
func (s *Source) GroupOf(key string) group.Key {
	for _, g := range s.groups {
		if g == nil {
			continue
		}
		if k, ok := g.groupOfKey(key); ok {
			return k
		}
	}
	return group.Key{}
}

// PrefixesOutsideZone returns the prefixes of groups that are not under
// the zone's (the --hosts-domain), which a full reconcile lists too.
func (s *Source) PrefixesOutsideZone() []string {
	var out []string
	zone := s.zone.ZoneKeyPrefix()
	for _, g := range s.groups {
		if g == nil {
			continue
		}
		for _, p := range g.prefixes() {
			if !strings.HasPrefix(p, zone) {
				out = append(out, p)
			}
		}
	}
	return out
}

// ServiceSubtree is the key prefix every Service's records are under.
func (s *Source) ServiceSubtree() string { return s.services.subtree() }

// ServiceStarts returns every cached Service's subtree relative to
// ServiceSubtree, "<ns>/<name>/", in key order.
func (s *Source) ServiceStarts() []string { return s.services.starts() }

// PodPrefix is the key prefix of the pod addresses' records.
func (s *Source) PodPrefix() string { return s.pods.prefix }

// PodAddresses returns every indexed pod address, sorted; none without
// --pod-records=verified.
func (s *Source) PodAddresses() []string { return s.pods.addresses() }
