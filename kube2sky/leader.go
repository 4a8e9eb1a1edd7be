package kube2sky

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/etcdstore"
	"github.com/kubesky/kubesky/kube2sky/registry"
)

// The roles a replica plays.
const (
	roleStarting int32 = iota // not yet known: campaigning with no leader seen
	roleStandby               // another replica leads
	roleLeader                // this replica writes
)

// term is one period of leadership. Its context ends when leadership ends.
type term struct {
	ctx   context.Context
	lose  context.CancelFunc
	fence registry.Fence
}

func newTerm(ctx context.Context, f registry.Fence) *term {
	ctx, cancel := context.WithCancel(ctx)
	return &term{ctx: ctx, lose: cancel, fence: f}
}

// leadership publishes the current term to the workers.
type leadership struct {
	mu      sync.Mutex
	current *term         // nil while not leading
	changed chan struct{} // closed and replaced whenever current changes
}

func (l *leadership) set(t *term) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.current = t
	close(l.changed)
	l.changed = make(chan struct{})
}

// wait returns the current term, waiting for one to begin.
func (l *leadership) wait(ctx context.Context) (*term, error) {
	for {
		l.mu.Lock()
		t, changed := l.current, l.changed
		l.mu.Unlock()
		if t != nil && t.ctx.Err() == nil {
			return t, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// leadAlone is the one endless term of a replica without leader election.
func (c *Controller) leadAlone(ctx context.Context) {
	t := newTerm(ctx, registry.Fence{})
	c.becomeLeader(t)
	c.serveTerm(t)
	c.endTerm()
}

// campaignLoop campaigns for leadership, serves each term won, and
// campaigns again, until ctx ends.
// A failed attempt is retried after a backoff, or at once when etcd answers
// again.
func (c *Controller) campaignLoop(ctx context.Context) {
	b := etcdstore.NewBackoff(200*time.Millisecond, 5*time.Second)
	for ctx.Err() == nil {
		back := c.probe.Back()
		err := c.campaign(ctx)
		if err == nil || ctx.Err() != nil {
			b.Reset()
			continue
		}
		c.log.Warn("leader election failed, retrying", "err", err)
		b.WaitOr(ctx, back)
	}
}

// campaign waits to become leader, then leads until the lease or the fence
// is lost or ctx ends.
func (c *Controller) campaign(ctx context.Context) error {
	sess, err := c.newSession(ctx)
	if err != nil {
		return fmt.Errorf("creating an election session: %w", err)
	}
	defer c.closeSession(ctx, sess)
	if err := c.revokeStale(ctx); err != nil {
		return fmt.Errorf("revoking the lease of an earlier term, whose key would stand in the way: %w", err)
	}
	campaignCtx, cancel := context.WithCancel(ctx)
	defer context.AfterFunc(sess.Ctx(), cancel)()
	el := concurrency.NewElection(sess, c.cfg.electionPrefix())
	var observer sync.WaitGroup
	defer observer.Wait()
	defer cancel()
	ours := fmt.Sprintf("%s/%x", c.cfg.electionPrefix(), sess.Lease())
	observer.Go(func() { c.observeLeader(campaignCtx, el, ours) })
	value := string(contract.Record{Text: c.cfg.identity(), Owner: c.owner}.Encode())
	if err := el.Campaign(campaignCtx, value); err != nil {
		return fmt.Errorf("campaigning: %w", err)
	}
	t := newTerm(ctx, registry.Fence{Key: el.Key(), Rev: el.Rev()})
	c.serveLeadership(t, sess)
	return nil
}

// observeLeader marks this replica a standby whenever another one leads.
func (c *Controller) observeLeader(ctx context.Context, el *concurrency.Election, ours string) {
	for resp := range el.Observe(ctx) {
		if len(resp.Kvs) == 0 || string(resp.Kvs[0].Key) == ours {
			continue
		}
		if c.role.CompareAndSwap(roleStarting, roleStandby) {
			c.log.Info("standing by", "leader", string(resp.Kvs[0].Value))
		}
	}
}

// serveLeadership serves one term until it ends.
func (c *Controller) serveLeadership(t *term, sess *concurrency.Session) {
	c.becomeLeader(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.serveTerm(t)
	}()
	c.waitTermEnd(t, sess)
	t.lose()
	<-done
	c.endTerm()
}

// waitTermEnd returns when the lease is lost, the term is given up, or etcd
// has not answered for a whole lease: the lease is surely gone by then.
func (c *Controller) waitTermEnd(t *term, sess *concurrency.Session) {
	tick := time.NewTicker(c.cfg.probeInterval)
	defer tick.Stop()
	for {
		select {
		case <-sess.Done():
			c.log.Warn("leader lease lost")
			return
		case <-t.ctx.Done():
			return
		case <-tick.C:
			if d := c.probe.UnreachableFor(); d > c.cfg.LeaseDuration {
				c.log.Warn("etcd unreachable for longer than the lease: stepping down", "for", d)
				return
			}
		}
	}
}

func (c *Controller) becomeLeader(t *term) {
	c.log.Info("leading: this replica writes the records", "identity", c.cfg.identity(), "election_key", t.fence.Key)
	c.reconciled.Store(false)
	c.role.Store(roleLeader)
	c.metrics.leader.Set(1)
	c.lead.set(t)
}

func (c *Controller) endTerm() {
	c.lead.set(nil)
	c.metrics.leader.Set(0)
	c.role.Store(roleStarting)
	c.reconciled.Store(false)
	c.log.Info("stopped leading")
}

// newSession grants a lease (with a deadline, so an unreachable etcd is an
// error, not a hang) and keeps it alive until closeSession.
func (c *Controller) newSession(ctx context.Context) (*concurrency.Session, error) {
	ttl := int(c.cfg.LeaseDuration / time.Second)
	gctx, cancel := context.WithTimeout(ctx, c.cfg.Etcd.RequestTimeout)
	lease, err := c.etcd.Grant(gctx, int64(ttl))
	cancel()
	if err != nil {
		return nil, err
	}
	return concurrency.NewSession(c.etcd, concurrency.WithLease(lease.ID), concurrency.WithTTL(ttl),
		concurrency.WithContext(context.WithoutCancel(ctx)))
}

// closeSession stops the keep-alive and revokes the lease, which deletes
// the election key so a standby takes over at once.
func (c *Controller) closeSession(ctx context.Context, sess *concurrency.Session) {
	sess.Orphan()
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.cfg.Etcd.RequestTimeout)
	defer cancel()
	if _, err := c.etcd.Revoke(rctx, sess.Lease()); err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound) {
		c.log.Debug("revoking the election lease failed; retrying before the next campaign", "err", err)
		c.staleMu.Lock()
		c.staleLeases = append(c.staleLeases, sess.Lease())
		c.staleMu.Unlock()
	}
}

// revokeStale revokes the leases earlier sessions could not, so that this
// replica's own old election key (which etcd keeps alive across a restart)
// does not keep it waiting for a whole TTL. It keeps those it still cannot,
// and then fails.
func (c *Controller) revokeStale(ctx context.Context) error {
	c.staleMu.Lock()
	defer c.staleMu.Unlock()
	kept := c.staleLeases[:0]
	var firstErr error
	for _, id := range c.staleLeases {
		rctx, cancel := context.WithTimeout(ctx, c.cfg.Etcd.RequestTimeout)
		_, err := c.etcd.Revoke(rctx, id)
		cancel()
		if err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound) {
			kept = append(kept, id)
			firstErr = cmp.Or(firstErr, err)
		}
	}
	c.staleLeases = kept
	return firstErr
}

// serveTerm runs the term's first full reconcile (retried until it
// succeeds), then one every resync period, until the term ends.
func (c *Controller) serveTerm(t *term) {
	b := etcdstore.NewBackoff(200*time.Millisecond, 10*time.Second)
	for c.resync(t) != nil {
		if !b.Wait(t.ctx) {
			return
		}
	}
	c.reconciled.Store(true)
	tick := time.NewTicker(c.cfg.ResyncPeriod)
	defer tick.Stop()
	for {
		select {
		case <-t.ctx.Done():
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
func (c *Controller) resync(t *term) error {
	restore := tightGC(c.cfg.GCPercent)
	err := c.fullReconcile(t)
	restore()
	switch {
	case err == nil:
		freeReconcileGarbage()
	case errors.Is(err, registry.ErrNotLeader):
		c.log.Warn("full reconcile fenced off: leadership lost")
		t.lose()
	case t.ctx.Err() == nil:
		c.log.Warn("full reconcile failed", "err", err)
	}
	return err
}
