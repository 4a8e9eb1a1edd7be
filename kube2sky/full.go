package kube2sky

import (
	"errors"
	"maps"
	"slices"
	"time"
)

// fullGroup is one Service's desired and current keys in a full reconcile.
// The group with key "" is the zone itself: dns-version, and owned keys that
// belong to no Service.
type fullGroup struct {
	want []desiredKV
	cur  current
}

// fullReconcile lists everything kube2sky may own, diffs every Service at
// once, deletes owned keys that no Service explains, and writes the
// changes packed into few Txns. A Txn that meets a concurrent change leaves
// its Services to the workers.
func (c *Controller) fullReconcile(t *term) error {
	c.fullMu.Lock()
	defer c.fullMu.Unlock()
	start := time.Now()
	defer func() { c.metrics.reconcileDuration.WithLabelValues("full").Observe(time.Since(start).Seconds()) }()
	zoneCur, err := c.store.list(t.ctx, c.zone.ZoneKeyPrefix())
	if err != nil {
		return err
	}
	arpaCur, err := c.store.list(t.ctx, c.zone.ReverseKeyPrefix())
	if err != nil {
		return err
	}
	if err := c.listExtra(t.ctx, zoneCur); err != nil {
		return err
	}
	groups := c.desiredGroups()
	c.assignForward(groups, zoneCur)
	c.assignReverse(groups, arpaCur)
	written, failed, err := c.writeGroups(t, groups)
	if err != nil {
		return err
	}
	c.afterFull(groups, written, failed)
	c.log.Info("full reconcile done", "services", len(c.services.GetStore().ListKeys()), "keys_seen", len(zoneCur)+len(arpaCur),
		"services_changed", len(written), "services_left_to_workers", len(failed), "duration", time.Since(start))
	return nil
}

// desiredGroups builds every cached Service's records, resets the PTR index
// to their claims, and gives each PTR to its winner.
func (c *Controller) desiredGroups() map[string]*fullGroup {
	groups := map[string]*fullGroup{"": {want: encodeEntries(c.desiredZone()), cur: current{}}}
	claims := map[string][]string{}
	ptrs := map[string]desired{}
	for _, svc := range c.allServices() {
		key := svc.Key()
		d := c.build(key, svc)
		groups[key] = &fullGroup{want: encodeEntries(d.forward), cur: current{}}
		claims[key] = entryKeys(d.ptr)
		ptrs[key] = d
	}
	c.addExtraGroups(groups, claims, ptrs)
	c.ptrs.reset(claims)
	for key, d := range ptrs {
		for _, e := range d.ptr {
			if c.ptrs.winner(e.Key) == key {
				groups[key].want = append(groups[key].want, desiredKV{key: e.Key, value: e.Record.Encode()})
			}
		}
	}
	return groups
}

// groupOf returns the group of a key, creating an empty one for a Service
// that exists only in etcd (an orphan).
func groupOf(groups map[string]*fullGroup, key string) *fullGroup {
	g, ok := groups[key]
	if !ok {
		g = &fullGroup{cur: current{}}
		groups[key] = g
	}
	return g
}

// assignForward files every key under the zone with its Service (or pod
// address, or the hosts), or with the zone group when it belongs to none.
func (c *Controller) assignForward(groups map[string]*fullGroup, cur current) {
	for k, v := range cur {
		groupOf(groups, c.groupOfForward(k)).cur[k] = v
	}
}

// assignReverse files every PTR key with its winner; an owned key nobody
// claims goes to the Service it points at (or the zone group), to be
// deleted.
func (c *Controller) assignReverse(groups map[string]*fullGroup, cur current) {
	for k, v := range cur {
		if w := c.ptrs.winner(k); w != "" {
			groupOf(groups, w).cur[k] = v
			continue
		}
		if v.owner != c.owner {
			continue
		}
		key := ""
		if ns, name, ok := c.zone.ServiceOfTarget(v.host); ok {
			key = serviceKey(ns, name)
		}
		groupOf(groups, key).cur[k] = v
	}
}

// writeGroups plans every group and commits the changes in packed Txns. It
// returns the Services written and those whose Txn met a concurrent change.
func (c *Controller) writeGroups(t *term, groups map[string]*fullGroup) (written, failed map[string]bool, err error) {
	var planned []serviceChanges
	for _, key := range slices.Sorted(maps.Keys(groups)) {
		p := plan(c.owner, groups[key].want, groups[key].cur)
		c.metrics.foreignKeys.Add(float64(p.foreign))
		if len(p.changes) > 0 {
			planned = append(planned, serviceChanges{key: key, changes: p.changes})
		}
	}
	written, failed = map[string]bool{}, map[string]bool{}
	for _, b := range pack(planned, c.store.maxOps) {
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
