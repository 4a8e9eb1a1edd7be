package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kubesky/kubesky/internal/poll"
)

// setup is one configuration of the bench: W readers, with or without
// proxies.
type setup struct {
	readers, proxies, perClient int
	tier                        string // what the proxies are (checkTier); "" without proxies
}

// run is one configuration's cluster, data, readers and figures.
type run struct {
	opts  options
	setup setup
	log   *slog.Logger
	// readerLog is where the readers' ListWatchers log (--reader-log).
	readerLog *slog.Logger
	c         *cluster
	data      *dataset
	fleet     *fleet
	track     *tracker
	result    result
}

// result is what one configuration measured.
type result struct {
	setup     setup
	keys      int
	clients   int
	sync      time.Duration
	syncCache listCache     // the proxies' caches over the initial sync
	syncUsage []serverUsage // the servers over the initial sync
	idle      []serverUsage // before any reader
	churn     phase
	slow      phase
	slowBack  time.Duration // the stalled reader current again after its release
	slowOK    bool
	recovered []recovery
}

// phase is a stretch of churn: the fan-out of its revisions and the
// servers' usage over it.
type phase struct {
	txns, failed int
	rate         float64
	lat          []time.Duration
	missed       int
	usage        []serverUsage
	responses    float64 // watch responses the batched relays sent
	seconds      float64 // the phase's length, the fan-out's wait included
}

// recovery is how the readers came back from one disruption.
type recovery struct {
	event       string
	took        time.Duration
	current, of int
	counted     counts
	usage       []serverUsage
}

// tally is what the readers and the proxies' caches have counted.
type tally struct {
	lists, errors, timeouts int64                // summed over the readers
	cache                   map[string]listCache // by proxy
}

// counts is what was counted over a stretch of a run.
type counts struct {
	lists    int64     // full lists the readers delivered
	errors   int64     // reader states carrying an error
	timeouts int64     // of which a request's deadline passed
	cache    listCache // list pages the proxies answered or passed on
}

// minus is what was counted after u, the proxies' caches together.
func (t tally) minus(u tally) counts {
	d := counts{lists: t.lists - u.lists, errors: t.errors - u.errors, timeouts: t.timeouts - u.timeouts}
	for name, c := range t.cache {
		since := c.since(u.cache[name])
		d.cache.hits, d.cache.misses = d.cache.hits+since.hits, d.cache.misses+since.misses
	}
	return d
}

func (r *run) do(ctx context.Context) error {
	dir := filepath.Join(r.opts.dir, fmt.Sprintf("w%d-p%d%s", r.setup.readers, r.setup.proxies, r.setup.tier))
	c, err := startCluster(ctx, r.opts.etcd, dir, r.opts.progressNotify)
	if err != nil {
		return err
	}
	r.c = c
	defer c.close()
	r.data = newDataset(r.opts.services, r.opts.endpoints)
	if r.result.keys, err = r.data.load(ctx, c.client); err != nil {
		return err
	}
	if err := c.startProxies(ctx, r.setup.proxies, r.setup.tier, r.opts); err != nil {
		return fmt.Errorf("starting the proxies: %w", err)
	}
	r.result.setup = r.setup
	r.result.idle = measure(c.servers()).finish()
	if err := r.startReaders(ctx); err != nil {
		return fmt.Errorf("starting %d readers: %w", r.setup.readers, err)
	}
	defer r.fleet.stop()
	steps := []struct {
		name string
		fn   func(context.Context) error
	}{
		{"churn", r.churnPhase}, {"slow reader", r.slowReaderPhase}, {"compaction", r.compaction},
		{"proxy restart", r.proxyRestart}, {"leader change", r.leaderChange},
	}
	for _, s := range steps {
		r.log.Info("phase", "name", s.name, "readers", r.setup.readers, "proxies", r.setup.proxies)
		if err := s.fn(ctx); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	return nil
}

// startReaders starts the fleet and waits until every reader has listed.
func (r *run) startReaders(ctx context.Context) error {
	r.track = newTracker()
	endpointsOf := func(client int) []string {
		if len(r.c.proxies) > 0 {
			return []string{r.c.proxies[client%len(r.c.proxies)].url}
		}
		return []string{r.c.members[client%len(r.c.members)].url}
	}
	before := r.counters()
	u := measure(r.c.servers())
	start := time.Now()
	f, err := startFleet(r.setup.readers, r.opts, endpointsOf, r.track, r.readerLog)
	if err != nil {
		return err
	}
	r.fleet, r.result.clients = f, len(f.clients)
	rev, err := r.revision(ctx)
	if err != nil {
		return err
	}
	if err := r.waitCurrent(ctx, rev, r.opts.catchUp); err != nil {
		return fmt.Errorf("initial sync: %w", err)
	}
	r.result.sync = time.Since(start)
	r.result.syncUsage = u.finish()
	r.result.syncCache = r.counters().minus(before).cache
	return nil
}

func (r *run) churnPhase(ctx context.Context) error {
	wait := func() error { return nil }
	if r.opts.profileDir != "" {
		run := fmt.Sprintf("w%d-p%d-%s", r.setup.readers, r.setup.proxies, r.setup.tier)
		wait = r.c.profile(r.opts.profileDir, run, r.opts.churn)
	}
	var err error
	r.result.churn, err = r.churnFor(ctx, r.opts.churn, true)
	if perr := wait(); perr != nil {
		r.log.Warn("the relays' CPU profiles", "err", perr)
	}
	return err
}

// slowReaderPhase stalls reader 0's apply for r.opts.slow while the churn
// goes on, then lets it go and times its return to current.
func (r *run) slowReaderPhase(ctx context.Context) error {
	slow := r.fleet.readers[0]
	stall := make(chan struct{})
	slow.stall.Store(&stall)
	r.track.exclude.Store(0)
	p, err := r.churnFor(ctx, r.opts.slow, true)
	slow.stall.Store(nil)
	close(stall)
	if err != nil {
		return err
	}
	r.result.slow = p
	rev, err := r.revision(ctx)
	if err != nil {
		return err
	}
	released := time.Now()
	r.result.slowOK = poll.Every(ctx, r.opts.catchUp, 20*time.Millisecond, func(context.Context) error {
		if slow.applied.Load() < rev {
			return fmt.Errorf("the slow reader is at revision %d of %d", slow.applied.Load(), rev)
		}
		return nil
	}) == nil
	r.result.slowBack = time.Since(released)
	r.track.exclude.Store(-1)
	return nil
}

// compaction cuts every reader off, makes changes, compacts them away and
// lets the readers back: each must list again.
func (r *run) compaction(ctx context.Context) error {
	u := measure(r.c.servers())
	before := r.counters()
	r.fleet.hold()
	if _, err := r.churnFor(ctx, 2*time.Second, false); err != nil {
		return err
	}
	rev, err := r.revision(ctx)
	if err != nil {
		return err
	}
	if _, err := r.c.client.Compact(ctx, rev); err != nil {
		return fmt.Errorf("compacting at %d: %w", rev, err)
	}
	start := time.Now()
	r.fleet.release()
	return r.recover(ctx, "compaction of every reader's revision", start, rev, u, before)
}

// proxyRestart stops the first proxy and starts it again; its readers
// reconnect and resume their watches.
func (r *run) proxyRestart(ctx context.Context) error {
	if len(r.c.proxies) == 0 {
		return nil
	}
	u := measure(r.c.servers())
	before := r.counters()
	start := time.Now()
	if err := r.c.restart(ctx, r.c.proxies[0]); err != nil {
		return err
	}
	rev, err := r.marker(ctx)
	if err != nil {
		return err
	}
	return r.recover(ctx, "restart of one proxy", start, rev, u, before)
}

// leaderChange moves etcd's leadership to another member.
func (r *run) leaderChange(ctx context.Context) error {
	u := measure(r.c.servers())
	before := r.counters()
	start := time.Now()
	if _, err := r.c.moveLeader(ctx); err != nil {
		return err
	}
	rev, err := r.marker(ctx)
	if err != nil {
		return err
	}
	return r.recover(ctx, "etcd leader change", start, rev, u, before)
}

// recover waits for every reader to reach rev and records how it went.
func (r *run) recover(ctx context.Context, event string, start time.Time, rev int64, u *usage, before tally) error {
	_ = r.waitCurrent(ctx, rev, r.opts.catchUp) // a reader left behind is a figure, not a failure
	took := time.Since(start)
	r.log.Info("reader errors other than timeouts", "event", event, "by_message", r.fleet.others.take())
	r.result.recovered = append(r.result.recovered, recovery{
		event: event, took: took, current: r.fleet.current(rev), of: len(r.fleet.readers),
		counted: r.counters().minus(before), usage: u.finish(),
	})
	return nil
}

// counters reads the tally now; the proxies' caches count as 0 where
// their metrics cannot be read (logged).
func (r *run) counters() tally {
	var t tally
	if r.fleet != nil {
		t.lists = r.fleet.sum(func(x *reader) int64 { return x.lists.Load() })
		t.errors = r.fleet.sum(func(x *reader) int64 { return x.errors.Load() })
		t.timeouts = r.fleet.sum(func(x *reader) int64 { return x.timeouts.Load() })
	}
	var err error
	if t.cache, err = r.c.cacheCounts(); err != nil {
		r.log.Warn("reading the proxies' cache counters", "err", err)
	}
	return t
}

// marker commits one change, retrying while etcd elects, and returns its
// revision.
func (r *run) marker(ctx context.Context) (int64, error) {
	var rev int64
	err := poll.Until(ctx, time.Minute, func(ctx context.Context) error {
		var err error
		rev, err = r.commitOne(ctx)
		return err
	})
	return rev, err
}

// churnFor commits opts.rate changes a second for d and, if timed, waits
// for the readers and times each change's fan-out.
func (r *run) churnFor(ctx context.Context, d time.Duration, timed bool) (phase, error) {
	rev, err := r.revision(ctx)
	if err != nil {
		return phase{}, err
	}
	r.track.window(rev+1, int(d.Seconds()*float64(r.opts.rate))+100)
	u := measure(r.c.servers())
	responses := r.c.watchResponses()
	var p phase
	tick := time.NewTicker(time.Second / time.Duration(r.opts.rate))
	defer tick.Stop()
	start := time.Now()
	for time.Since(start) < d {
		<-tick.C
		if _, err := r.commitOne(ctx); err != nil {
			p.failed++
			continue
		}
		p.txns++
	}
	p.rate = float64(p.txns) / time.Since(start).Seconds()
	if !timed {
		return p, nil
	}
	last, err := r.revision(ctx)
	if err != nil {
		return phase{}, err
	}
	want := int64(r.setup.readers)
	if r.track.exclude.Load() >= 0 {
		want--
	}
	_ = poll.Every(ctx, 30*time.Second, 20*time.Millisecond, func(context.Context) error {
		if n := r.fleet.current(last); int64(n) < want {
			return fmt.Errorf("%d readers at revision %d", n, last)
		}
		return nil
	})
	p.usage = u.finish()
	p.responses, p.seconds = r.c.watchResponses()-responses, time.Since(start).Seconds()
	p.lat, p.missed = r.track.fanOut(want)
	return p, nil
}

// commitOne commits the next churn Txn; the time it was sent stands for
// its commit.
func (r *run) commitOne(ctx context.Context) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ch := r.data.nextChange()
	sent := time.Now()
	resp, err := r.c.client.Txn(ctx).If(ch.cmps...).Then(ch.ops...).Else(clientv3.OpGet(fenceKey)).Commit()
	if err != nil {
		return 0, err
	}
	if !resp.Succeeded {
		return 0, fmt.Errorf("churn Txn at %d: a condition failed", resp.Header.Revision)
	}
	r.data.committed(ch, resp.Header.Revision)
	r.track.committed(resp.Header.Revision, sent)
	return resp.Header.Revision, nil
}

// revision returns etcd's current revision, retrying for a minute: a
// thousand readers listing at once can hold a read past its deadline.
func (r *run) revision(ctx context.Context) (int64, error) {
	var rev int64
	err := poll.Until(ctx, time.Minute, func(ctx context.Context) error {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		resp, err := r.c.client.Get(rctx, fenceKey)
		if err != nil {
			return err
		}
		rev = resp.Header.Revision
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("reading etcd's revision: %w", err)
	}
	return rev, nil
}

// waitCurrent waits until every reader has applied rev.
func (r *run) waitCurrent(ctx context.Context, rev int64, timeout time.Duration) error {
	return poll.Every(ctx, timeout, 20*time.Millisecond, func(context.Context) error {
		if n := r.fleet.current(rev); n < len(r.fleet.readers) {
			return fmt.Errorf("%d of %d readers at revision %d", n, len(r.fleet.readers), rev)
		}
		return nil
	})
}
