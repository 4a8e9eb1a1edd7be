package kube2sky

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kubesky/kubesky/etcdstore"
	"github.com/kubesky/kubesky/kube2sky/group"
	"github.com/kubesky/kubesky/kube2sky/plan"
	"github.com/kubesky/kubesky/kube2sky/records"
	"github.com/kubesky/kubesky/kube2sky/registry"
	"github.com/kubesky/kubesky/kube2sky/registry/leader"
	"github.com/kubesky/kubesky/kube2sky/source"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"
)

// Controller keeps etcd's records in step with the cluster's Services:
// the loop between what the cluster says and what etcd holds. Events
// enqueue a group (changed); workers take each group off the queue and,
// while this replica leads, write the difference between what it should
// hold and what etcd holds (syncGroup); every term begins with a full
// reconcile, which also collects what no group explains, and repeats it
// every resync period (serveTerm, full.go).
type Controller struct {
	cfg     Config
	zone    records.Zone
	owner   string
	log     *slog.Logger
	metrics *metrics

	// The parts (parts.go).
	source  cluster      // what the cluster says
	store   recordStore  // what etcd holds
	probe   reachability // whether etcd answers
	elector leadership   // who may write

	queue    workqueue.TypedRateLimitingInterface[group.Key] // the groups to reconcile
	ptrs     *ptrIndex                                       // which group writes each PTR
	triggers *triggers                                       // when each queued group went stale

	// fullMu is held for writing by a full reconcile and for reading by each
	// Service reconcile, so that the two never interleave.
	fullMu sync.RWMutex

	synced     atomic.Bool // informers have listed everything
	reconciled atomic.Bool // the current term's first full reconcile is done

	resyncRequests chan chan error // full reconciles asked for by tests
}

// New returns a Controller of the Services seen through kube, writing to
// etcd. cfg must be valid (Config.Validate); a nil log discards. Its work
// queue runs from here on and stops when Run returns.
func New(cfg Config, kube kubernetes.Interface, etcd *clientv3.Client, log *slog.Logger) (*Controller, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.probeInterval <= 0 {
		cfg.probeInterval = 2 * time.Second
	}
	if cfg.serviceChunk <= 0 {
		cfg.serviceChunk = serviceChunk
	}
	c := &Controller{
		cfg:            cfg,
		zone:           cfg.zone(),
		owner:          cfg.owner(),
		log:            log,
		ptrs:           newPTRIndex(),
		triggers:       newTriggers(),
		resyncRequests: make(chan chan error),
	}
	c.queue = workqueue.NewTypedRateLimitingQueueWithConfig(retryLimiter(), workqueue.TypedRateLimitingQueueConfig[group.Key]{})
	c.metrics = newMetrics(func() float64 { return float64(c.queue.Len()) })
	store := registry.NewStore(etcd, cfg.Etcd.RequestTimeout, cfg.MaxTxnOps-1)
	probe := registry.NewProbe(store, cfg.electionPrefix(), cfg.probeInterval, c.metrics.etcdReachable, log)
	c.store, c.probe = store, probe
	c.elector = leader.New(cfg.leaderConfig(), etcd, probe, c.metrics.leader, log)
	src, err := source.New(kube, cfg.sourceConfig(), c.metrics.source(), log, c.changed)
	if err != nil {
		return nil, err
	}
	c.source = src
	return c, nil
}

// Run starts the informers, waits for them to sync, then reconciles as the
// leader (or waits as a standby) until ctx ends. It returns nil on a clean
// stop; etcd being unreachable is retried, never returned.
func (c *Controller) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer c.queue.ShutDown()
	c.source.Run(ctx, &wg)
	wg.Go(func() { c.probe.Run(ctx) })
	c.log.Info("waiting for the informers to sync")
	if !c.source.WaitForSync(ctx) {
		return nil
	}
	c.synced.Store(true)
	c.log.Info("informers synced", "services", c.source.ServiceCount())
	for range c.cfg.Workers {
		wg.Go(func() { c.work(ctx) })
	}
	if c.cfg.LeaderElect {
		wg.Go(func() { c.elector.Campaign(ctx, c.serveTerm) })
	} else {
		wg.Go(func() { c.elector.LeadAlone(ctx, c.serveTerm) })
	}
	<-ctx.Done()
	return nil
}

// changed records when a group's records went stale and enqueues it. A
// zero trigger time means now.
func (c *Controller) changed(key group.Key, trigger time.Time) {
	if trigger.IsZero() {
		trigger = time.Now()
	}
	c.triggers.add(key, trigger)
	c.queue.Add(key)
}

// work reconciles queued groups until the queue shuts down.
func (c *Controller) work(ctx context.Context) {
	for {
		key, quit := c.queue.Get()
		if quit {
			return
		}
		c.process(ctx, key)
		c.queue.Done(key)
	}
}

// retryLimiter spaces the retries of a group whose reconcile failed: 100
// ms doubling, at most maxRetryGap apart. A group that failed through an
// etcd outage is retried within maxRetryGap of etcd's return, so a change
// made during the outage reaches DNS that soon after it; the workers,
// one group at a time each, bound the load the retries put on etcd.
func retryLimiter() workqueue.TypedRateLimiter[group.Key] {
	return workqueue.NewTypedItemExponentialFailureRateLimiter[group.Key](100*time.Millisecond, maxRetryGap)
}

// maxRetryGap is the longest wait between two reconciles of a failing group.
const maxRetryGap = 2 * time.Second

// process reconciles one group once this replica leads.
func (c *Controller) process(ctx context.Context, key group.Key) {
	t, err := c.elector.Wait(ctx)
	if err != nil {
		return
	}
	err = c.syncGroup(t, key)
	switch {
	case err == nil:
		c.queue.Forget(key)
	case errors.Is(err, registry.ErrNotLeader):
		c.log.Warn("write fenced off: leadership lost", "service", key)
		t.Lose()
		c.queue.AddRateLimited(key)
	default:
		c.log.Info("reconcile failed, retrying", "service", key, "err", err, "retries", c.queue.NumRequeues(key))
		c.queue.AddRateLimited(key)
	}
}

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

// serveTerm runs the term's first full reconcile (retried until it
// succeeds), then one every resync period, until the term ends; the
// replica is ready from the first one's end to the term's.
func (c *Controller) serveTerm(t *leader.Term) {
	defer c.reconciled.Store(false)
	b := etcdstore.NewBackoff(200*time.Millisecond, 10*time.Second)
	for c.resync(t) != nil {
		if !b.Wait(t.Context()) {
			return
		}
	}
	c.reconciled.Store(true)
	tick := time.NewTicker(c.cfg.ResyncPeriod)
	defer tick.Stop()
	for {
		select {
		case <-t.Context().Done():
			return
		case <-tick.C:
			_ = c.resync(t)
		case reply := <-c.resyncRequests:
			reply <- c.resync(t)
		case <-c.probe.Reconnected():
			_ = c.resync(t)
		}
	}
}

// resync runs a full reconcile; losing the fence ends the term.
func (c *Controller) resync(t *leader.Term) error {
	restore := tightGC(c.cfg.GCPercent)
	err := c.fullReconcile(t)
	restore()
	switch {
	case err == nil:
		freeReconcileGarbage()
	case errors.Is(err, registry.ErrNotLeader):
		c.log.Warn("full reconcile fenced off: leadership lost")
		t.Lose()
	case t.Context().Err() == nil:
		c.log.Warn("full reconcile failed", "err", err)
	}
	return err
}
