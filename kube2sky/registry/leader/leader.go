package leader

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/etcdstore"
	"github.com/kubesky/kubesky/kube2sky/registry"
)

// Role is the part a replica plays.
type Role int32

// The roles.
const (
	Starting Role = iota // not yet known: campaigning with no leader seen
	Standby              // another replica leads
	Leading              // this replica writes
)

// Config is what an Elector campaigns with.
type Config struct {
	Prefix         string        // the election's key prefix
	Identity       string        // this replica's name, in the election key's value
	Owner          string        // the owner id, in the election key's value
	LeaseDuration  time.Duration // the lease's TTL (whole seconds)
	RequestTimeout time.Duration // the deadline of each etcd request
	CheckInterval  time.Duration // how often a leader checks that etcd still answers
}

// Reachability is what an Elector asks of etcd's probe (registry.Probe).
type Reachability interface {
	// UnreachableFor returns how long etcd has not answered.
	UnreachableFor() time.Duration
	// Back returns a channel closed when etcd answers again.
	Back() <-chan struct{}
}

var _ Reachability = (*registry.Probe)(nil)

// Elector is this replica's part in the election: it campaigns, serves
// each term it wins and ends a term when its lease is lost or etcd has not
// answered for a whole lease. The workers ask it one question: Wait for
// the current term, whose Fence conditions every write.
type Elector struct {
	cfg     Config
	etcd    *clientv3.Client
	probe   Reachability     // whether etcd answers
	leading prometheus.Gauge // 1 while this replica leads
	log     *slog.Logger
	role    atomic.Int32 // a Role
	lead    leadership

	staleMu     sync.Mutex
	staleLeases []clientv3.LeaseID // leases that could not be revoked; guarded by staleMu
}

// New returns the elector of one replica, which sets leading to 1 while
// the replica leads.
func New(cfg Config, etcd *clientv3.Client, probe Reachability, leading prometheus.Gauge, log *slog.Logger) *Elector {
	return &Elector{cfg: cfg, etcd: etcd, probe: probe, leading: leading, log: log,
		lead: leadership{changed: make(chan struct{})}}
}

// Role returns the part the replica plays now.
func (e *Elector) Role() Role { return Role(e.role.Load()) }

// Wait returns the current term, waiting for one to begin.
func (e *Elector) Wait(ctx context.Context) (*Term, error) { return e.lead.wait(ctx) }

// Term is one period of leadership. Its context ends when leadership ends.
type Term struct {
	ctx   context.Context
	lose  context.CancelFunc
	fence registry.Fence
}

func newTerm(ctx context.Context, f registry.Fence) *Term {
	ctx, cancel := context.WithCancel(ctx)
	return &Term{ctx: ctx, lose: cancel, fence: f}
}

// Context ends when the term does.
func (t *Term) Context() context.Context { return t.ctx }

// Lose ends the term: a write was fenced off.
func (t *Term) Lose() { t.lose() }

// Fence is the condition on leadership of every write of the term.
func (t *Term) Fence() registry.Fence { return t.fence }

// leadership publishes the current term to the workers.
type leadership struct {
	mu      sync.Mutex
	current *Term         // nil while not leading
	changed chan struct{} // closed and replaced whenever current changes
}

func (l *leadership) set(t *Term) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.current = t
	close(l.changed)
	l.changed = make(chan struct{})
}

// wait returns the current term, waiting for one to begin.
func (l *leadership) wait(ctx context.Context) (*Term, error) {
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

// LeadAlone is the one endless term of a replica without leader election,
// served by serve.
func (e *Elector) LeadAlone(ctx context.Context, serve func(*Term)) {
	t := newTerm(ctx, registry.Fence{})
	e.becomeLeader(t)
	serve(t)
	e.endTerm()
}

// Campaign campaigns for leadership, serves each term won with serve
// (which returns when the term's context ends), and campaigns again, until
// ctx ends.
// A failed attempt is retried after a backoff, or at once when etcd answers
// again.
func (e *Elector) Campaign(ctx context.Context, serve func(*Term)) {
	b := etcdstore.NewBackoff(200*time.Millisecond, 5*time.Second)
	for ctx.Err() == nil {
		back := e.probe.Back()
		err := e.campaign(ctx, serve)
		if err == nil || ctx.Err() != nil {
			b.Reset()
			continue
		}
		e.log.Warn("leader election failed, retrying", "err", err)
		b.WaitOr(ctx, back)
	}
}

// campaign waits to become leader, then leads until the lease or the fence
// is lost or ctx ends.
func (e *Elector) campaign(ctx context.Context, serve func(*Term)) error {
	sess, err := e.newSession(ctx)
	if err != nil {
		return fmt.Errorf("creating an election session: %w", err)
	}
	defer e.closeSession(ctx, sess)
	if err := e.revokeStale(ctx); err != nil {
		return fmt.Errorf("revoking the lease of an earlier term, whose key would stand in the way: %w", err)
	}
	campaignCtx, cancel := context.WithCancel(ctx)
	defer context.AfterFunc(sess.Ctx(), cancel)()
	el := concurrency.NewElection(sess, e.cfg.Prefix)
	var observer sync.WaitGroup
	defer observer.Wait()
	defer cancel()
	ours := fmt.Sprintf("%s/%x", e.cfg.Prefix, sess.Lease())
	observer.Go(func() { e.observeLeader(campaignCtx, el, ours) })
	value := string(contract.Record{Text: e.cfg.Identity, Owner: e.cfg.Owner}.Encode())
	rev, err := e.join(campaignCtx, sess, ours, value)
	if err != nil {
		return err
	}
	if err := e.awaitTurn(campaignCtx, ours, rev); err != nil {
		return fmt.Errorf("campaigning: %w", err)
	}
	t := newTerm(ctx, registry.Fence{Key: ours, Rev: rev})
	e.serveLeadership(t, sess, serve)
	return nil
}

// observeLeader marks this replica a standby whenever another one leads.
func (e *Elector) observeLeader(ctx context.Context, el *concurrency.Election, ours string) {
	for resp := range el.Observe(ctx) {
		if len(resp.Kvs) == 0 || string(resp.Kvs[0].Key) == ours {
			continue
		}
		if e.role.CompareAndSwap(int32(Starting), int32(Standby)) {
			e.log.Info("standing by", "leader", string(resp.Kvs[0].Value))
		}
	}
}

// serveLeadership serves one term until it ends.
func (e *Elector) serveLeadership(t *Term, sess *concurrency.Session, serve func(*Term)) {
	e.becomeLeader(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		serve(t)
	}()
	e.waitTermEnd(t, sess)
	t.lose()
	<-done
	e.endTerm()
}

// waitTermEnd returns when the lease is lost, the term is given up, or etcd
// has not answered for a whole lease: the lease is surely gone by then.
func (e *Elector) waitTermEnd(t *Term, sess *concurrency.Session) {
	tick := time.NewTicker(e.cfg.CheckInterval)
	defer tick.Stop()
	for {
		select {
		case <-sess.Done():
			e.log.Warn("leader lease lost")
			return
		case <-t.ctx.Done():
			return
		case <-tick.C:
			if d := e.probe.UnreachableFor(); d > e.cfg.LeaseDuration {
				e.log.Warn("etcd unreachable for longer than the lease: stepping down", "for", d)
				return
			}
		}
	}
}

func (e *Elector) becomeLeader(t *Term) {
	e.log.Info("leading: this replica writes the records", "identity", e.cfg.Identity, "election_key", t.fence.Key)
	e.role.Store(int32(Leading))
	e.leading.Set(1)
	e.lead.set(t)
}

func (e *Elector) endTerm() {
	e.lead.set(nil)
	e.leading.Set(0)
	e.role.Store(int32(Starting))
	e.log.Info("stopped leading")
}

// newSession grants a lease (with a deadline, so an unreachable etcd is an
// error, not a hang) and keeps it alive until closeSession.
func (e *Elector) newSession(ctx context.Context) (*concurrency.Session, error) {
	ttl := int(e.cfg.LeaseDuration / time.Second)
	gctx, cancel := context.WithTimeout(ctx, e.cfg.RequestTimeout)
	lease, err := e.etcd.Grant(gctx, int64(ttl))
	cancel()
	if err != nil {
		return nil, err
	}
	return concurrency.NewSession(e.etcd, concurrency.WithLease(lease.ID), concurrency.WithTTL(ttl),
		concurrency.WithContext(context.WithoutCancel(ctx)))
}

// closeSession stops the keep-alive and revokes the lease, which deletes
// the election key so a standby takes over at once.
func (e *Elector) closeSession(ctx context.Context, sess *concurrency.Session) {
	sess.Orphan()
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.cfg.RequestTimeout)
	defer cancel()
	if _, err := e.etcd.Revoke(rctx, sess.Lease()); err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound) {
		e.log.Debug("revoking the election lease failed; retrying before the next campaign", "err", err)
		e.staleMu.Lock()
		e.staleLeases = append(e.staleLeases, sess.Lease())
		e.staleMu.Unlock()
	}
}

// revokeStale revokes the leases earlier sessions could not, so that this
// replica's own old election key (which etcd keeps alive across a restart)
// does not keep it waiting for a whole TTL. It keeps those it still cannot,
// and then fails.
func (e *Elector) revokeStale(ctx context.Context) error {
	e.staleMu.Lock()
	defer e.staleMu.Unlock()
	kept := e.staleLeases[:0]
	var firstErr error
	for _, id := range e.staleLeases {
		rctx, cancel := context.WithTimeout(ctx, e.cfg.RequestTimeout)
		_, err := e.etcd.Revoke(rctx, id)
		cancel()
		if err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound) {
			kept = append(kept, id)
			firstErr = cmp.Or(firstErr, err)
		}
	}
	e.staleLeases = kept
	return firstErr
}
