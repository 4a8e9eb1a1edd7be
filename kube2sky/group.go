package kube2sky

import (
	"context"
	"strings"

	"github.com/kubesky/kubesky/kube2sky/group"
	"github.com/kubesky/kubesky/kube2sky/plan"
)

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
// (desiredRest): every kind but the pod addresses, which are too many for
// that and have a pass of their own (fullpods.go).
type wholeKind interface {
	recordGroup
	// eachDesired calls fn with every group of the kind the caches know and
	// its records.
	eachDesired(fn func(name string, d group.Desired))
}

// group returns the implementation of a kind; nil for the zone, for the
// kube-dns ConfigMap without --kube-dns-configmap and for the name servers
// without --dns-service.
func (c *Controller) group(kind group.Kind) recordGroup {
	return c.groups[kind]
}

// desiredOf returns the records a group should have, from the caches.
func (c *Controller) desiredOf(key group.Key) group.Desired {
	if g := c.group(key.Kind); g != nil {
		return g.desired(key.Name)
	}
	return group.Desired{}
}

// readGroup reads what etcd holds of a group, plus the PTR keys it claims
// or held.
func (c *Controller) readGroup(ctx context.Context, key group.Key) (plan.Current, error) {
	var s group.Scope
	if g := c.group(key.Kind); g != nil {
		s = g.scope(key.Name)
	}
	out := plan.Current{}
	single := append(s.Keys, c.ptrs.responsible(key)...)
	for _, p := range s.Prefixes {
		cur, err := c.store.Read(ctx, p, single)
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
func (c *Controller) groupOfForward(key string) group.Key {
	for _, g := range c.groups {
		if g == nil {
			continue
		}
		if group, ok := g.groupOfKey(key); ok {
			return group
		}
	}
	return group.Key{}
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
