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
	"github.com/kubesky/kubesky/kube2sky/leader"
	"github.com/kubesky/kubesky/kube2sky/records"
	"github.com/kubesky/kubesky/kube2sky/registry"
	"github.com/kubesky/kubesky/kube2sky/source"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"
)

// Controller keeps etcd's records in step with the cluster's Services.
type Controller struct {
	cfg      Config
	zone     records.Zone
	owner    string
	log      *slog.Logger
	etcd     *clientv3.Client
	kube     kubernetes.Interface // for the informers and events
	store    *registry.Store
	probe    *registry.Probe // etcd's reachability
	queue    workqueue.TypedRateLimitingInterface[group.Key]
	ptrs     *ptrIndex
	triggers *triggers
	metrics  *metrics
	elector  *leader.Elector
	source   *source.Source // what the cluster says

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
		etcd:           etcd,
		kube:           kube,
		store:          registry.NewStore(etcd, cfg.Etcd.RequestTimeout, cfg.MaxTxnOps-1),
		ptrs:           newPTRIndex(),
		triggers:       newTriggers(),
		resyncRequests: make(chan chan error),
	}
	c.queue = workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[group.Key](100*time.Millisecond, 30*time.Second),
		workqueue.TypedRateLimitingQueueConfig[group.Key]{})
	c.metrics = newMetrics(func() float64 { return float64(c.queue.Len()) })
	c.probe = registry.NewProbe(c.store, cfg.electionPrefix(), cfg.probeInterval, c.metrics.etcdReachable, log)
	c.elector = leader.New(leader.Config{Prefix: cfg.electionPrefix(), Identity: cfg.identity(), Owner: c.owner,
		LeaseDuration: cfg.LeaseDuration, RequestTimeout: cfg.Etcd.RequestTimeout, CheckInterval: cfg.probeInterval},
		etcd, c.probe, c.metrics.leader, log)
	var err error
	if c.source, err = source.New(kube, cfg.sourceConfig(), c.metrics.source(), log, c.changed); err != nil {
		return nil, err
	}
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
	c.source.Run(ctx, c.kube, &wg)
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

// changed records when a group's records went stale and enqueues it. A
// zero trigger time means now.
func (c *Controller) changed(key group.Key, trigger time.Time) {
	if trigger.IsZero() {
		trigger = time.Now()
	}
	c.triggers.add(key, trigger)
	c.queue.Add(key)
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
