package kube2sky

import (
	"bytes"
	"context"
	"errors"
	"iter"
	"maps"
	"slices"
	"time"

	"github.com/kubesky/kubesky/kube2sky/group"
	"github.com/kubesky/kubesky/kube2sky/plan"
	"github.com/kubesky/kubesky/kube2sky/registry"
	"github.com/kubesky/kubesky/kube2sky/registry/leader"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// fullGroup is one group's desired and current keys in a full reconcile.
// The zone group (the zero key) is the zone itself: dns-version, and owned
// keys that belong to no other group.
type fullGroup struct {
	want []plan.Want
	cur  plan.Current // nil until a key differs: most groups' keys are all plan.Current, or absent
	hold bool         // leave cur as it is
}

// addCurrent files a key etcd holds that differs from what the group wants.
func (g *fullGroup) addCurrent(key string, v plan.KV) {
	if g.cur == nil {
		g.cur = plan.Current{}
	}
	g.cur[key] = v
}

// fullReconcile builds every group's records, lists everything kube2sky
// may own, deletes owned keys that no group explains, and writes the
// changes packed into few Txns. A Txn that meets a concurrent change leaves
// its groups to the workers. It goes in three passes, so that it never
// holds every record at once: the Services' subtrees, a chunk of Services
// at a time (fullservices.go); the rest of the zone, the hosts domain and
// every PTR (the PTR winners are decided first, over every claim); and the
// pod addresses, a chunk at a time (fullpods.go).
func (c *Controller) fullReconcile(t *leader.Term) error {
	c.fullMu.Lock()
	defer c.fullMu.Unlock()
	start := time.Now()
	defer func() { c.metrics.reconcileDuration.WithLabelValues("full").Observe(time.Since(start).Seconds()) }()
	rest := c.desiredRest()
	services, err := c.reconcileServices(t)
	if err != nil {
		return err
	}
	others, err := c.reconcileGroups(t, rest, c.fileRest)
	if err != nil {
		return err
	}
	services.add(others)
	pods, err := c.reconcilePods(t)
	if err != nil {
		return err
	}
	c.log.Info("full reconcile done", "services", c.source.ServiceCount(), "keys_seen", services.seen+pods.seen,
		"services_changed", services.written, "services_left_to_workers", services.failed,
		"pod_addresses_changed", pods.written, "pod_addresses_left_to_workers", pods.failed, "duration", time.Since(start))
	return nil
}

// fullPass counts what one pass of a full reconcile saw and did: the keys
// listed, and the groups written and left to the workers.
type fullPass struct{ seen, written, failed int }

func (p *fullPass) add(q fullPass) {
	p.seen, p.written, p.failed = p.seen+q.seen, p.written+q.written, p.failed+q.failed
}

// reconcileGroups files what etcd holds (list) against the desired groups,
// writes the difference and hands the groups whose Txn failed to the
// workers.
func (c *Controller) reconcileGroups(t *leader.Term, groups map[group.Key]*fullGroup,
	list func(context.Context, map[group.Key]*fullGroup) (int, error)) (fullPass, error) {
	seen, err := list(t.Context(), groups)
	if err != nil {
		return fullPass{}, err
	}
	written, failed, err := c.writeGroups(t, groups)
	if err != nil {
		return fullPass{}, err
	}
	c.afterFull(groups, written, failed)
	return fullPass{seen: seen, written: len(written), failed: len(failed)}, nil
}

// desiredRest builds the records of every group the caches know but the
// pod addresses, resets the PTR index to their claims (a pod address
// claims none), and returns the groups of the pass after the Services':
// the zone's, the hosts' and the kube-dns ConfigMap's records, and each
// PTR with the group that wins it. A Service's forward records are
// dropped here (the Service pass builds them again, a chunk at a time);
// what stays is encoded, one PTR value per claimed address.
func (c *Controller) desiredRest() map[group.Key]*fullGroup {
	groups := map[group.Key]*fullGroup{{}: {want: plan.Encode(c.desiredZone())}}
	claims := map[group.Key][]string{}
	ptrs := map[group.Key][]plan.Want{}
	c.source.EachWhole(func(key group.Key, d group.Desired) {
		switch {
		case key.Kind != group.Service:
			groups[key] = &fullGroup{want: plan.Encode(d.Forward), hold: d.Hold}
		case d.Hold: // its PTRs stay as etcd has them too
			groups[key] = &fullGroup{hold: true}
		}
		if len(d.PTR) > 0 {
			claims[key] = group.EntryKeys(d.PTR)
			ptrs[key] = plan.Encode(d.PTR)
		}
	})
	c.ptrs.reset(claims)
	for key, kvs := range ptrs {
		for _, kv := range kvs {
			if c.ptrs.winner(kv.Key) == key {
				g := groupOf(groups, key)
				g.want = append(g.want, kv)
			}
		}
	}
	return groups
}

// groupOf returns the group of a key, creating an empty one for a Service
// that exists only in etcd (an orphan).
func groupOf(groups map[group.Key]*fullGroup, key group.Key) *fullGroup {
	g, ok := groups[key]
	if !ok {
		g = &fullGroup{}
		groups[key] = g
	}
	return g
}

// fileRest lists what etcd holds under the zone but for the Services' and
// the pod addresses' subtrees (the other passes list those), under the
// hosts domain and the reverse zone, and files each key with its group: a
// forward key with the hosts, the kube-dns ConfigMap or the zone group; a
// PTR key with its winner, or, when nobody claims it and it is owned, with
// the Service it points at (or the zone group), to be deleted. A key that
// already holds the value its group wants is marked on the desired record
// instead of being kept (or decoded), so the listing holds memory only for
// what differs. It returns how many keys it saw.
func (c *Controller) fileRest(ctx context.Context, groups map[group.Key]*fullGroup) (int, error) {
	wanted := wantIndex(groups)
	seen := 0
	forward := c.fileForward(groups, wanted, &seen)
	reverse := func(key string, value []byte, modRev int64) {
		seen++
		grp, keep := c.ptrs.winner(key), true
		if grp != (group.Key{}) && wanted.markCurrent(grp, key, value) {
			return
		}
		v := plan.Decode(value, modRev)
		if grp == (group.Key{}) {
			grp, keep = c.orphanGroup(v)
		}
		if keep {
			groupOf(groups, grp).addCurrent(key, v)
		}
	}
	for _, r := range subtreeGaps(c.zone.ZoneKeyPrefix(), c.source.PodPrefix(), c.source.ServiceSubtree()) {
		if err := c.store.ScanRange(ctx, r.from, r.end, forward); err != nil {
			return 0, err
		}
	}
	for _, p := range c.source.PrefixesOutsideZone() {
		if err := c.store.Scan(ctx, p, forward); err != nil {
			return 0, err
		}
	}
	err := c.store.Scan(ctx, c.zone.ReverseKeyPrefix(), reverse)
	return seen, err
}

// keyRange is the keys from from (included) to end (excluded).
type keyRange struct{ from, end string }

// subtreeGaps returns the ranges that cover prefix's subtree but for the
// subtrees of inner, which lie under prefix.
func subtreeGaps(prefix string, inner ...string) []keyRange {
	inner = slices.Sorted(slices.Values(inner))
	var out []keyRange
	from := prefix
	for _, p := range inner {
		out = append(out, keyRange{from: from, end: p})
		from = clientv3.GetPrefixRangeEnd(p)
	}
	return append(out, keyRange{from: from, end: clientv3.GetPrefixRangeEnd(prefix)})
}

// fileForward returns the function that files a forward key listed from
// etcd with its group, counting it in seen (see fileRest).
func (c *Controller) fileForward(groups map[group.Key]*fullGroup, wanted wanted, seen *int) func(string, []byte, int64) {
	return func(key string, value []byte, modRev int64) {
		*seen++
		grp := c.source.GroupOf(key)
		if !wanted.markCurrent(grp, key, value) {
			groupOf(groups, grp).addCurrent(key, plan.Decode(value, modRev))
		}
	}
}

// orphanGroup returns the group of a PTR nobody claims: the Service it
// points at, or the zone group (""); keep is false when kube2sky does not
// own it, and leaves it alone.
func (c *Controller) orphanGroup(v plan.KV) (grp group.Key, keep bool) {
	if v.Owner != c.owner {
		return group.Key{}, false
	}
	if ns, name, ok := c.zone.ServiceOfTarget(v.Host); ok {
		return group.ServiceKey(ns, name), true
	}
	return group.Key{}, true
}

// wantRef is a desired record and the group that wants it.
type wantRef struct {
	group group.Key
	kv    *plan.Want
}

// wanted indexes every group's desired records by key.
type wanted map[string]wantRef

func wantIndex(groups map[group.Key]*fullGroup) wanted {
	n := 0
	for _, g := range groups {
		n += len(g.want)
	}
	out := make(wanted, n)
	for key, g := range groups {
		for i := range g.want {
			out[g.want[i].Key] = wantRef{group: key, kv: &g.want[i]}
		}
	}
	return out
}

// markCurrent marks the desired record of key as current when group wants
// it with exactly value, and reports whether it did.
func (w wanted) markCurrent(group group.Key, key string, value []byte) bool {
	ref, ok := w[key]
	if !ok || ref.group != group || !bytes.Equal(ref.kv.Value, value) {
		return false
	}
	ref.kv.Current = true
	return true
}

// writeGroups plans every group and commits the changes in packed Txns. It
// returns the Services written and those whose Txn met a concurrent change.
func (c *Controller) writeGroups(t *leader.Term, groups map[group.Key]*fullGroup) (written, failed map[group.Key]bool, err error) {
	written, failed = map[group.Key]bool{}, map[group.Key]bool{}
	for b := range plan.Pack(c.plannedGroups(groups), c.store.MaxOps()) {
		err := c.commit(t, b.Changes)
		switch {
		case errors.Is(err, registry.ErrConflict):
			markAll(failed, b.Groups)
		case err != nil:
			return nil, nil, err
		default:
			markAll(written, b.Groups)
		}
	}
	return written, failed, nil
}

// plannedGroups plans the groups one at a time, in key order, and yields
// the changes of each group that has any. A group's desired values are
// dropped once planned: from then on only its changes refer to them, and
// they go as soon as their Txn is committed.
func (c *Controller) plannedGroups(groups map[group.Key]*fullGroup) iter.Seq[plan.GroupChanges] {
	return func(yield func(plan.GroupChanges) bool) {
		for _, key := range slices.SortedFunc(maps.Keys(groups), group.Key.Compare) {
			g := groups[key]
			if g.hold {
				continue
			}
			p := plan.Diff(c.owner, g.want, g.cur)
			g.want = nil
			c.metrics.foreignKeys.Add(float64(p.Foreign))
			if len(p.Changes) > 0 && !yield(plan.GroupChanges{Key: key, Changes: p.Changes}) {
				return
			}
		}
	}
}

func markAll(set map[group.Key]bool, keys []group.Key) {
	for _, k := range keys {
		set[k] = true
	}
}

// afterFull records what each Service is responsible for, hands the
// Services whose Txn failed to the workers, and observes the programming
// latency of the ones written.
func (c *Controller) afterFull(groups map[group.Key]*fullGroup, written, failed map[group.Key]bool) {
	for key, g := range groups {
		if key.Kind == group.Zone {
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
