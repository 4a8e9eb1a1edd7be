package kube2sky

import (
	"cmp"
	"context"
	"log/slog"
	"strings"

	"github.com/kubesky/kubesky/kube2sky/records"
)

// groupKind is a kind of record group. The kinds sort in this order, so a
// Service wins a PTR it shares with a host.
type groupKind uint8

const (
	kindZone       groupKind = iota // the zone itself: dns-version, and owned keys no other group explains
	kindService                     // one Service: services.go
	kindHosts                       // every host record and its PTRs: hostsmap.go
	kindKubeDNS                     // the kube-dns ConfigMap's stub domains and upstreams: kubednsmap.go
	kindNameServer                  // the DNS Service's addresses as the zone's name servers: nameserver.go
	kindPod                         // one pod address: pods.go
)

// groupKey is what the work queue holds: a group of keys reconciled
// together.
type groupKey struct {
	kind groupKind
	// name is a Service's "namespace/name", a pod address's
	// "<ns>/<a-b-c-d>", "" for the groups of which there is one.
	name string
}

// compare orders group keys by kind, then by name.
func (k groupKey) compare(o groupKey) int {
	return cmp.Or(cmp.Compare(k.kind, o.kind), cmp.Compare(k.name, o.name))
}

// String is the key as the log shows it.
func (k groupKey) String() string {
	switch k.kind {
	case kindService:
		return k.name
	case kindPod:
		return "pod/" + k.name
	case kindHosts:
		return "hosts"
	case kindKubeDNS:
		return "kube-dns"
	case kindNameServer:
		return "name-servers"
	}
	return "zone"
}

// LogValue makes a key a string in every log format.
func (k groupKey) LogValue() slog.Value { return slog.StringValue(k.String()) }

// recordGroup is one kind of group: it says what records a group should
// have, and where in etcd its records are.
type recordGroup interface {
	// desired returns the records of the group called name; a group whose
	// objects are gone has none.
	desired(name string) desired
	// scope returns the keys etcd holds the group called name under.
	scope(name string) keyScope
	// prefixes returns the key prefixes every group of the kind lives under.
	prefixes() []string
	// groupOfKey returns the group a forward key under prefixes belongs to;
	// ok is false for a key not of this kind.
	groupOfKey(key string) (group groupKey, ok bool)
}

// wholeKind is a kind whose groups a full reconcile builds all at once
// (desiredRest): every kind but the pod addresses, which are too many for
// that and have a pass of their own (fullpods.go).
type wholeKind interface {
	recordGroup
	// eachDesired calls fn with every group of the kind the caches know and
	// its records.
	eachDesired(fn func(name string, d desired))
}

// keyScope is where a group's keys are: every key under each prefix, and
// the single keys.
type keyScope struct {
	prefixes []string
	keys     []string
}

// desired is what one group should have in etcd.
type desired struct {
	forward []records.Entry // under the group's scope
	ptr     []records.Entry // PTR claims; written only where the group wins
	hold    bool            // leave the group's keys as etcd has them
}

// splitPTRs splits entries into forward records and PTR claims.
func splitPTRs(zone records.Zone, entries []records.Entry) desired {
	reverse := 0
	for _, e := range entries {
		if zone.IsReverseKey(e.Key) {
			reverse++
		}
	}
	d := desired{forward: make([]records.Entry, 0, len(entries)-reverse), ptr: make([]records.Entry, 0, reverse)}
	for _, e := range entries {
		if zone.IsReverseKey(e.Key) {
			d.ptr = append(d.ptr, e)
		} else {
			d.forward = append(d.forward, e)
		}
	}
	return d
}

func entryKeys(entries []records.Entry) []string {
	keys := make([]string, len(entries))
	for i, e := range entries {
		keys[i] = e.Key
	}
	return keys
}

// group returns the implementation of a kind; nil for the zone, for the
// kube-dns ConfigMap without --kube-dns-configmap and for the name servers
// without --dns-service.
func (c *Controller) group(kind groupKind) recordGroup {
	return c.groups[kind]
}

// desiredOf returns the records a group should have, from the caches.
func (c *Controller) desiredOf(key groupKey) desired {
	if g := c.group(key.kind); g != nil {
		return g.desired(key.name)
	}
	return desired{}
}

// readGroup reads what etcd holds of a group, plus the PTR keys it claims
// or held.
func (c *Controller) readGroup(ctx context.Context, key groupKey) (current, error) {
	var s keyScope
	if g := c.group(key.kind); g != nil {
		s = g.scope(key.name)
	}
	out := current{}
	single := append(s.keys, c.ptrs.responsible(key)...)
	for _, p := range s.prefixes {
		cur, err := c.store.read(ctx, p, single)
		if err != nil {
			return nil, err
		}
		single = nil
		for k, v := range cur {
			out[k] = v
		}
	}
	return out, nil
}

// groupOfForward returns the group a key under the zone (or another prefix
// of a group) belongs to: the zone group when it is no other's.
func (c *Controller) groupOfForward(key string) groupKey {
	for _, g := range c.groups {
		if g == nil {
			continue
		}
		if group, ok := g.groupOfKey(key); ok {
			return group
		}
	}
	return groupKey{}
}

// prefixesOutsideZone returns the prefixes of groups that are not under
// the zone's (the --hosts-domain), which a full reconcile lists too.
func (c *Controller) prefixesOutsideZone() []string {
	var out []string
	zone := c.zone.ZoneKeyPrefix()
	for _, g := range c.groups {
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
