package skydns

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/kubesky/kubesky/skydns/dnsserver"
	"github.com/kubesky/kubesky/skydns/fastpath"
	"github.com/kubesky/kubesky/skydns/forward"
	"github.com/kubesky/kubesky/skydns/resolver"
	"github.com/kubesky/kubesky/skydns/snapshot"
)

// Daemon is a running skydns: the etcd mirror, the DNS servers, the HTTP
// server and, without etcd endpoints, the embedded etcd.
type Daemon struct {
	cfg     Config
	logger  *slog.Logger
	metrics *Metrics
	mirror  *Mirror

	etcd     embeddedEtcd // nil with external etcd
	etcdURL  string
	client   *clientv3.Client
	dns      *dnsserver.Server
	http     *httpServer
	stopped  chan struct{} // closed by Stop
	stopOnce sync.Once
	fatal    chan error
	stopLoop context.CancelFunc
	loopDone chan struct{}
}

// Run starts the daemon and runs it until ctx ends or a part of it fails,
// then shuts it down within cfg.ShutdownTimeout. An unreachable etcd is
// not a failure: the last snapshot keeps being served. Run also sets the
// process's GC target to cfg.GCPercent (Start, which tests share, does not).
func Run(ctx context.Context, cfg Config, logger *slog.Logger) error {
	if cfg.GCPercent >= 0 {
		debug.SetGCPercent(cfg.GCPercent)
	}
	d, err := Start(cfg, logger)
	if err != nil {
		return err
	}
	var failure error
	select {
	case <-ctx.Done():
		logger.Info("shutting down", "reason", context.Cause(ctx))
	case failure = <-d.Err():
		logger.Error("shutting down after a failure", "err", failure)
	}
	stopCtx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	return errors.Join(failure, d.Stop(stopCtx))
}

// Start starts every part of the daemon and returns once DNS and HTTP
// serve; the mirror syncs in the background. cfg must have been validated.
func Start(cfg Config, logger *slog.Logger) (_ *Daemon, err error) {
	logger.Info("starting skydns", "config", cfg)
	d := &Daemon{cfg: cfg, logger: logger, stopped: make(chan struct{}), fatal: make(chan error, 1)}
	defer func() {
		if err != nil {
			d.Stop(context.Background()) // what did start
		}
	}()
	res, err := resolver.New(resolver.Config{Zones: cfg.Zones, Prefix: cfg.Prefix, TTL: cfg.TTL, Pods: resolver.PodMode(cfg.PodRecords)})
	if err != nil {
		return nil, fmt.Errorf("--zone: %w", err)
	}
	if err := d.connectEtcd(); err != nil {
		return nil, err
	}
	d.mirror = NewMirror(cfg.Prefix, nil, logger.With("component", "mirror"))
	d.metrics = d.mirror.metrics
	forwarder, err := d.forwarder()
	if err != nil {
		return nil, err
	}
	d.mirror.onSnapshot = snapshotHook(cfg, forwarder)
	if err := d.serve(res, forwarder); err != nil {
		return nil, err
	}
	d.startLoop()
	return d, nil
}

// connectEtcd starts the embedded etcd if no endpoints are configured, and
// connects a client. The client does not wait for etcd: an etcd that is
// away at start is waited for by the mirror, not by Start.
func (d *Daemon) connectEtcd() error {
	opts := d.cfg.Etcd
	if d.cfg.Embedded() {
		if err := d.startEmbedded(); err != nil {
			return err
		}
		opts.Endpoints = []string{d.etcd.ClientURL()}
	}
	d.etcdURL = opts.Endpoints[0]
	client, err := opts.New(zap.NewNop())
	if err != nil {
		return err
	}
	d.client = client
	return nil
}

func (d *Daemon) startEmbedded() error {
	e, err := startEmbeddedEtcd(d.cfg)
	if err != nil {
		return fmt.Errorf("--etcd-data-dir %s, --embedded-etcd-addr %s: %w", d.cfg.EtcdDataDir, d.cfg.EmbeddedEtcdAddr, err)
	}
	d.etcd = e
	d.logger.Info("embedded etcd serving", "client-url", e.ClientURL(), "data-dir", d.cfg.EtcdDataDir)
	go func() {
		select {
		case err, ok := <-e.Err():
			if ok && err != nil {
				d.fail(fmt.Errorf("embedded etcd: %w", err))
			}
		case <-d.stopped:
		}
	}()
	return nil
}

// forwarder returns cfg.Forwarder, or else one built from cfg.Forward
// with its metrics in the daemon's registry.
func (d *Daemon) forwarder() (Forwarder, error) {
	if d.cfg.Forwarder != nil {
		return d.cfg.Forwarder, nil
	}
	f, err := forward.New(d.cfg.Forward, d.metrics.Registry, d.logger.With("component", "forward"))
	if err != nil {
		return nil, fmt.Errorf("forwarding: %w", err)
	}
	return f, nil
}

// snapshotHook is what runs on every published snapshot: the forwarder's
// stub domains, then cfg.OnSnapshot.
func snapshotHook(cfg Config, forwarder Forwarder) func(*snapshot.Snapshot) {
	stubs, _ := forwarder.(StubSetter)
	return func(s *snapshot.Snapshot) {
		if stubs != nil {
			stubs.SetStubsFrom(s, cfg.Zones)
		}
		if cfg.OnSnapshot != nil {
			cfg.OnSnapshot(s)
		}
	}
}

// serve starts the DNS and HTTP servers.
func (d *Daemon) serve(res *resolver.Resolver, forwarder Forwarder) error {
	a := &answerer{resolver: res, mirror: d.mirror, forwarder: forwarder}
	cfg := dnsserver.Config{
		Addr:       d.cfg.DNSAddr,
		Answerer:   a,
		MaxUDPSize: dnsserver.DefaultMaxUDPSize,
		UDPSockets: d.cfg.UDPSockets,
		FastStats:  d.metrics.answers,
		Observe:    d.metrics.observeExchange,
		Invalid:    func(error) { d.metrics.malformedPackets.Inc() },
		Logger:     d.logger.With("component", "dns"),
	}
	if d.cfg.FastPath {
		cfg.FastPath = &wireAnswers{answerer: a, maxUDPSize: cfg.MaxUDPSize}
		cfg.FastPathChanges = fastpath.NewChanges()
		d.mirror.beforePublish = recordChanges(cfg.FastPathChanges, d.cfg.Prefix)
	}
	srv, err := dnsserver.Start(cfg)
	if err != nil {
		return fmt.Errorf("--dns-addr: %w", err)
	}
	d.dns = srv
	d.logger.Info("serving DNS", "addr", srv.Addr(), "zones", res.Zones(), "fast-path", d.cfg.FastPath, "udp-sockets", d.cfg.UDPSockets)
	h := newHTTPHandler(d.mirror.Ready, d.metrics.Registry, d.cfg.Pprof)
	d.http, err = startHTTP(d.cfg.HTTPAddr, h, d.logger.With("component", "http"))
	if err != nil {
		return err
	}
	d.logger.Info("serving HTTP", "addr", d.http.addr, "pprof", d.cfg.Pprof)
	return nil
}

// startLoop runs the mirror's list-then-watch loop until Stop.
func (d *Daemon) startLoop() {
	ctx, cancel := context.WithCancel(context.Background())
	d.stopLoop = cancel
	d.loopDone = make(chan struct{})
	go func() {
		defer close(d.loopDone)
		d.mirror.Run(ctx, d.client, d.cfg.Etcd.RequestTimeout, d.cfg.EtcdProbeInterval)
	}()
}

func (d *Daemon) fail(err error) {
	select {
	case d.fatal <- err:
	default:
	}
}

// Err delivers the first failure that stops the daemon from working (the
// embedded etcd dying). etcd being unreachable is not one.
func (d *Daemon) Err() <-chan error { return d.fatal }

// DNSAddr is the host:port DNS is served on.
func (d *Daemon) DNSAddr() string { return d.dns.Addr() }

// HTTPAddr is the host:port of /healthz, /readyz and /metrics.
func (d *Daemon) HTTPAddr() string { return d.http.addr }

// EtcdURL is the embedded etcd's client URL, or the first endpoint.
func (d *Daemon) EtcdURL() string { return d.etcdURL }

// Mirror is the daemon's etcd mirror.
func (d *Daemon) Mirror() *Mirror { return d.mirror }

// Stop shuts the daemon down: DNS and HTTP first, letting queries in
// progress finish until ctx ends, then the mirror, the client and the
// embedded etcd. It is safe on a partly started daemon; a second call
// does nothing.
func (d *Daemon) Stop(ctx context.Context) error {
	var err error
	d.stopOnce.Do(func() { err = d.stop(ctx) })
	return err
}

func (d *Daemon) stop(ctx context.Context) error {
	close(d.stopped)
	var errs []error
	if d.dns != nil {
		errs = append(errs, d.dns.Shutdown(ctx))
	}
	if d.http != nil {
		errs = append(errs, d.http.shutdown(ctx))
	}
	if d.stopLoop != nil {
		d.stopLoop()
		<-d.loopDone
	}
	if d.client != nil {
		d.client.Close()
	}
	if d.etcd != nil {
		d.etcd.Close()
		d.logger.Info("embedded etcd stopped")
	}
	return errors.Join(errs...)
}
