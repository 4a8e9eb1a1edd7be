package kube2sky

import (
	"bytes"
	"context"
	"errors"
	"iter"
	"maps"
	"slices"
	"time"
)

// fullGroup is one Service's desired and current keys in a full reconcile.
// The group with key "" is the zone itself: dns-version, and owned keys that
// belong to no Service.
type fullGroup struct {
	want []desiredKV
	cur  current // nil until a key differs: most groups' keys are all current, or absent
	hold bool    // leave cur as it is
}

// addCurrent files a key etcd holds that differs from what the group wants.
func (g *fullGroup) addCurrent(key string, v kv) {
	if g.cur == nil {
		g.cur = current{}
	}
	g.cur[key] = v
}

// fullReconcile builds every Service's records, lists everything kube2sky
// may own, deletes owned keys that no Service explains, and writes the
// changes packed into few Txns. A Txn that meets a concurrent change leaves
// its Services to the workers.
func (c *Controller) fullReconcile(t *term) error {
	c.fullMu.Lock()
	defer c.fullMu.Unlock()
	start := time.Now()
	defer func() { c.metrics.reconcileDuration.WithLabelValues("full").Observe(time.Since(start).Seconds()) }()
	groups := c.desiredGroups()
	seen, err := c.fileCurrent(t.ctx, groups)
	if err != nil {
		return err
	}
	written, failed, err := c.writeGroups(t, groups)
	if err != nil {
		return err
	}
	c.afterFull(groups, written, failed)
	c.log.Info("full reconcile done", "services", len(c.services.GetStore().ListKeys()), "keys_seen", seen,
		"services_changed", len(written), "services_left_to_workers", len(failed), "duration", time.Since(start))
	return nil
}

// desiredGroups builds every cached Service's records, resets the PTR index
// to their claims, and gives each PTR to its winner. Records are encoded
// as each Service is built, so only the encoded values stay in memory.
func (c *Controller) desiredGroups() map[string]*fullGroup {
	groups := map[string]*fullGroup{"": {want: encodeEntries(c.desiredZone())}}
	claims := map[string][]string{}
	ptrs := map[string][]desiredKV{}
	for _, svc := range c.allServices() {
		key := svc.Key()
		addGroup(groups, claims, ptrs, key, c.build(key, svc))
	}
	c.addExtraGroups(groups, claims, ptrs)
	c.ptrs.reset(claims)
	for key, kvs := range ptrs {
		for _, kv := range kvs {
			if c.ptrs.winner(kv.key) == key {
				groups[key].want = append(groups[key].want, kv)
			}
		}
	}
	return groups
}

// addGroup files one group's desired records in a full reconcile: its
// forward records in its group, its PTRs (if any: a pod address has none)
// in ptrs until the winners are known, and their keys in claims.
func addGroup(groups map[string]*fullGroup, claims map[string][]string, ptrs map[string][]desiredKV, key string, d desired) {
	groups[key] = &fullGroup{want: encodeEntries(d.forward), hold: d.hold}
	if len(d.ptr) > 0 {
		claims[key] = entryKeys(d.ptr)
		ptrs[key] = encodeEntries(d.ptr)
	}
}

// groupOf returns the group of a key, creating an empty one for a Service
// that exists only in etcd (an orphan).
func groupOf(groups map[string]*fullGroup, key string) *fullGroup {
	g, ok := groups[key]
	if !ok {
		g = &fullGroup{}
		groups[key] = g
	}
	return g
}

// fileCurrent lists what etcd holds under the zone, the hosts domain and
// the reverse zone, and files each key with its group: a forward key with
// its Service (or pod address, or the hosts), or the zone group when it
// belongs to none; a PTR key with its winner, or, when nobody claims it and
// it is owned, with the Service it points at (or the zone group), to be
// deleted. A key that already holds the value its group wants is marked on
// the desired record instead of being kept (or decoded), so the listing
// holds memory only for what differs. It returns how many keys it saw.
func (c *Controller) fileCurrent(ctx context.Context, groups map[string]*fullGroup) (int, error) {
	wanted := wantIndex(groups)
	seen := 0
	forward := func(key string, value []byte, modRev int64) {
		seen++
		group := c.groupOfForward(key)
		if !wanted.markCurrent(group, key, value) {
			groupOf(groups, group).addCurrent(key, decodeKV(value, modRev))
		}
	}
	reverse := func(key string, value []byte, modRev int64) {
		seen++
		group, keep := c.ptrs.winner(key), true
		if group != "" && wanted.markCurrent(group, key, value) {
			return
		}
		v := decodeKV(value, modRev)
		if group == "" {
			group, keep = c.orphanGroup(v)
		}
		if keep {
			groupOf(groups, group).addCurrent(key, v)
		}
	}
	if err := c.store.scan(ctx, c.zone.ZoneKeyPrefix(), forward); err != nil {
		return 0, err
	}
	if err := c.scanExtra(ctx, forward); err != nil {
		return 0, err
	}
	err := c.store.scan(ctx, c.zone.ReverseKeyPrefix(), reverse)
	return seen, err
}

// orphanGroup returns the group of a PTR nobody claims: the Service it
// points at, or the zone group (""); keep is false when kube2sky does not
// own it, and leaves it alone.
func (c *Controller) orphanGroup(v kv) (group string, keep bool) {
	if v.owner != c.owner {
		return "", false
	}
	if ns, name, ok := c.zone.ServiceOfTarget(v.host); ok {
		return serviceKey(ns, name), true
	}
	return "", true
}

// wantRef is a desired record and the group that wants it.
type wantRef struct {
	group string
	kv    *desiredKV
}

// wanted indexes every group's desired records by key.
type wanted map[string]wantRef

func wantIndex(groups map[string]*fullGroup) wanted {
	n := 0
	for _, g := range groups {
		n += len(g.want)
	}
	out := make(wanted, n)
	for key, g := range groups {
		for i := range g.want {
			out[g.want[i].key] = wantRef{group: key, kv: &g.want[i]}
		}
	}
	return out
}

// markCurrent marks the desired record of key as current when group wants
// it with exactly value, and reports whether it did.
func (w wanted) markCurrent(group, key string, value []byte) bool {
	ref, ok := w[key]
	if !ok || ref.group != group || !bytes.Equal(ref.kv.value, value) {
		return false
	}
	ref.kv.current = true
	return true
}

// writeGroups plans every group and commits the changes in packed Txns. It
// returns the Services written and those whose Txn met a concurrent change.
func (c *Controller) writeGroups(t *term, groups map[string]*fullGroup) (written, failed map[string]bool, err error) {
	written, failed = map[string]bool{}, map[string]bool{}
	for b := range pack(c.plannedGroups(groups), c.store.maxOps) {
		err := c.commit(t, b.changes)
		switch {
		case errors.Is(err, errConflict):
			markAll(failed, b.services)
		case err != nil:
			return nil, nil, err
		default:
			markAll(written, b.services)
		}
	}
	return written, failed, nil
}

// plannedGroups plans the groups one at a time, in key order, and yields
// the changes of each group that has any. A group's desired values are
// dropped once planned: from then on only its changes refer to them, and
// they go as soon as their Txn is committed.
func (c *Controller) plannedGroups(groups map[string]*fullGroup) iter.Seq[serviceChanges] {
	return func(yield func(serviceChanges) bool) {
		for _, key := range slices.Sorted(maps.Keys(groups)) {
			g := groups[key]
			if g.hold {
				continue
			}
			p := plan(c.owner, g.want, g.cur)
			g.want = nil
			c.metrics.foreignKeys.Add(float64(p.foreign))
			if len(p.changes) > 0 && !yield(serviceChanges{key: key, changes: p.changes}) {
				return
			}
		}
	}
}

func markAll(set map[string]bool, keys []string) {
	for _, k := range keys {
		set[k] = true
	}
}

// afterFull records what each Service is responsible for, hands the
// Services whose Txn failed to the workers, and observes the programming
// latency of the ones written.
func (c *Controller) afterFull(groups map[string]*fullGroup, written, failed map[string]bool) {
	for key, g := range groups {
		if key == "" {
			continue
		}
		var extra []string
		if failed[key] {
			for k := range g.cur {
				if c.zone.IsReverseKey(k) {
					extra = append(extra, k)
				}
			}
			c.queue.Add(key)
		}
		c.ptrs.hold(key, extra)
		if written[key] && !failed[key] {
			c.observeProgramming(c.triggers.take(key))
		}
	}
}
