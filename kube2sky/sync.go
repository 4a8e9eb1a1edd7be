package kube2sky

import (
	"context"
	"time"

	"github.com/kubesky/kubesky/kube2sky/group"
	"github.com/kubesky/kubesky/kube2sky/leader"
	"github.com/kubesky/kubesky/kube2sky/plan"
	"github.com/kubesky/kubesky/kube2sky/registry"
)

// syncGroup reconciles one group: it reads the group's scope and the PTR
// keys it claims or held, and writes the difference.
func (c *Controller) syncGroup(t *leader.Term, key group.Key) (err error) {
	c.fullMu.RLock()
	defer c.fullMu.RUnlock()
	start := time.Now()
	trigger := c.triggers.take(key)
	defer func() {
		c.metrics.reconcileDuration.WithLabelValues("service").Observe(time.Since(start).Seconds())
		if err != nil && !trigger.IsZero() {
			c.triggers.add(key, trigger)
		}
	}()
	d := c.source.Desired(key)
	if d.Hold {
		return nil
	}
	for _, w := range c.ptrs.set(key, group.EntryKeys(d.PTR)) {
		c.queue.Add(w)
	}
	cur, err := c.readGroup(t.Context(), key)
	if err != nil {
		return err
	}
	want := c.winningPTRs(key, d, cur)
	if _, err := c.apply(t, key, plan.Diff(c.owner, want, cur)); err != nil {
		return err
	}
	c.ptrs.hold(key, nil)
	c.observeProgramming(trigger)
	return nil
}

// winningPTRs returns a group's desired keys: its forward records and the
// PTRs it wins. PTR keys won by another group are dropped from cur, so
// they are left to the winner.
func (c *Controller) winningPTRs(key group.Key, d group.Desired, cur plan.Current) []plan.Want {
	want := plan.Encode(d.Forward)
	for _, e := range d.PTR {
		if c.ptrs.winner(e.Key) == key {
			want = append(want, plan.Want{Key: e.Key, Value: e.Record.Encode()})
		}
	}
	for k := range cur {
		if c.zone.IsReverseKey(k) {
			if w := c.ptrs.winner(k); w != (group.Key{}) && w != key {
				delete(cur, k)
			}
		}
	}
	return want
}

// apply commits one group's changes; it reports whether anything was
// written.
func (c *Controller) apply(t *leader.Term, key group.Key, p plan.Result) (bool, error) {
	if p.Foreign > 0 {
		c.metrics.foreignKeys.Add(float64(p.Foreign))
		c.log.Warn("records owned by someone else are in the way; left alone", "service", key, "keys", p.Foreign)
	}
	if len(p.Changes) == 0 {
		return false, nil
	}
	for _, b := range plan.Batches(p.Changes, c.store.MaxOps()) {
		if err := c.commit(t, b); err != nil {
			return false, err
		}
	}
	c.log.Debug("service reconciled", "service", key, "changes", len(p.Changes))
	return true, nil
}

// commit writes one batch and counts it.
func (c *Controller) commit(t *leader.Term, batch []plan.Change) error {
	err := c.store.Commit(t.Context(), t.Fence(), batch)
	switch {
	case err == nil:
		c.metrics.txns.Inc()
		for _, ch := range batch {
			if ch.Value == nil {
				c.metrics.recordsDeleted.Inc()
			} else {
				c.metrics.recordsWritten.Inc()
			}
		}
	case err == registry.ErrNotLeader:
		c.metrics.txnFailures.WithLabelValues(failNotLeader).Inc()
	case err == registry.ErrConflict:
		c.metrics.txnFailures.WithLabelValues(failConflict).Inc()
	default:
		c.metrics.txnFailures.WithLabelValues(failError).Inc()
	}
	return err
}

// observeProgramming records the DNS programming latency of a change: from
// its trigger time until etcd held records reflecting it, whether this sync
// wrote them or found them already current (an earlier sync that read the
// change from the cache before its event arrived wrote them).
func (c *Controller) observeProgramming(trigger time.Time) {
	if !trigger.IsZero() {
		c.metrics.programming.Observe(max(time.Since(trigger), 0).Seconds())
	}
}

// readGroup reads what etcd holds of a group, plus the PTR keys it claims
// or held.
func (c *Controller) readGroup(ctx context.Context, key group.Key) (plan.Current, error) {
	s := c.source.Scope(key)
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
