package skydns

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/contract"
	cs "github.com/kubesky/kubesky/contract/clusterset"
	"github.com/kubesky/kubesky/etcdstore"
	"github.com/kubesky/kubesky/skydns/clusterset"
)

// clustersetZone answers clusterset.local from its own list-then-watch of
// --clusterset-prefix (docs/clusterset.md).
type clustersetZone struct {
	prefix string
	ttl    uint32
	logger *slog.Logger
	// store is only touched by the ListWatcher's goroutine.
	store *cs.Store
	// view is the newest merged view; nil until the first list, when
	// every question is answered SERVFAIL rather than a false NXDOMAIN.
	view atomic.Pointer[cs.View]
	// state is the feed's health, for /readyz; observe, for the metrics.
	state   atomic.Pointer[etcdstore.State]
	observe func(etcdstore.State)
}

// newClustersetZone returns the zone of cfg, or nil without
// --clusterset-prefix.
func newClustersetZone(cfg Config, logger *slog.Logger) *clustersetZone {
	if cfg.ClustersetPrefix == "" {
		return nil
	}
	z := &clustersetZone{prefix: strings.TrimSuffix(cfg.ClustersetPrefix, "/"), ttl: cfg.ClustersetTTL, logger: logger}
	z.store = cs.NewStore(z.prefix, cfg.ClusterID, func(err error) { logger.Warn("malformed clusterset record skipped", "err", err) })
	return z
}

func (z *clustersetZone) answer(req *dns.Msg) *dns.Msg {
	v := z.view.Load()
	if v == nil {
		return new(dns.Msg).SetRcode(req, dns.RcodeServerFailure)
	}
	return clusterset.Answer(v, req, z.ttl)
}

// run lists and watches the prefix until ctx ends; src is the broker's
// client, or the records' without --clusterset-etcd-endpoints.
func (z *clustersetZone) run(ctx context.Context, src etcdstore.Source, timing WatchTiming) {
	lw := &etcdstore.ListWatcher{
		Source:         src,
		Prefix:         z.prefix + "/",
		RequestTimeout: timing.RequestTimeout,
		ProbeInterval:  timing.ProbeInterval,
		StallAfter:     timing.StallAfter,
		RelistJitter:   timing.RelistJitter,
		OnUpdate:       z.apply,
		OnState:        z.setState,
		Logger:         z.logger,
	}
	_ = lw.Run(ctx) // ctx's error
}

func (z *clustersetZone) setState(s etcdstore.State) {
	z.state.Store(&s)
	if z.observe != nil {
		z.observe(s)
	}
}

// readiness is the clusterset's check for /readyz?verbose, which reports
// it without deciding: a broker away must not take the cluster's own
// names out of service, and clusterset.local answers from its last view.
func (z *clustersetZone) readiness() check {
	s := z.state.Load()
	var err error
	switch {
	case s == nil || !s.Synced && s.Err == nil:
		err = errors.New("not listed yet: clusterset.local answers SERVFAIL")
	case !s.Synced:
		err = fmt.Errorf("not listed yet: clusterset.local answers SERVFAIL; etcd unreachable since %s: %v", s.Since.UTC().Format(time.RFC3339), s.Err)
	case !s.Connected && s.Err != nil:
		err = fmt.Errorf("etcd unreachable since %s, answering from the last view: %v", s.Since.UTC().Format(time.RFC3339), s.Err)
	}
	return check{"clusterset", err}
}

func (z *clustersetZone) apply(u contract.Update) {
	z.store.Apply(u)
	z.view.Store(z.store.View())
}
