package skydns

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"

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

// run lists and watches the prefix until ctx ends.
func (z *clustersetZone) run(ctx context.Context, src etcdstore.Source, timing WatchTiming) {
	lw := &etcdstore.ListWatcher{
		Source:         src,
		Prefix:         z.prefix + "/",
		RequestTimeout: timing.RequestTimeout,
		ProbeInterval:  timing.ProbeInterval,
		StallAfter:     timing.StallAfter,
		RelistJitter:   timing.RelistJitter,
		OnUpdate:       z.apply,
		Logger:         z.logger,
	}
	_ = lw.Run(ctx) // ctx's error
}

func (z *clustersetZone) apply(u contract.Update) {
	z.store.Apply(u)
	z.view.Store(z.store.View())
}
