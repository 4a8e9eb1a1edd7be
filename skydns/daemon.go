package skydns

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/miekg/dns"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/kubesky/kubesky/internal/memlimit"
	"github.com/kubesky/kubesky/skydns/dnssec"
	"github.com/kubesky/kubesky/skydns/dnsserver"
	"github.com/kubesky/kubesky/skydns/fastpath"
	"github.com/kubesky/kubesky/skydns/forward"
	"github.com/kubesky/kubesky/skydns/querylog"
	"github.com/kubesky/kubesky/skydns/resolver"
	"github.com/kubesky/kubesky/skydns/rewrite"
	"github.com/kubesky/kubesky/skydns/snapshot"
	"github.com/kubesky/kubesky/skydns/tap"
	"github.com/kubesky/kubesky/skydns/template"
	"github.com/kubesky/kubesky/skydns/transfer"
)

// Daemon is a running skydns: the etcd mirror, the DNS servers, the HTTP
// server and, without etcd endpoints, the embedded etcd.
type Daemon struct {
	cfg     Config
	logger  *slog.Logger
	metrics *Metrics
	mirror  *Mirror

	etcd    embeddedEtcd // nil with external etcd
	etcdURL string
	client  *clientv3.Client
	// broker reads the clusterset (--clusterset-etcd-endpoints); nil
	// when client does.
	broker   *clientv3.Client
	dnsMu    sync.Mutex        // guards dns
	dns      *dnsserver.Server // nil until bound (node-local mode binds it late)
	http     *httpServer
	health   *httpServer   // on --health-socket; nil without
	stopped  chan struct{} // closed by Stop
	stopOnce sync.Once
	fatal    chan error
	// clusterset answers clusterset.local; nil without --clusterset-prefix.
	clusterset *clustersetZone
	stopLoop   context.CancelFunc
	loopDone   chan struct{}
	lameduck   atomic.Bool // set by Lameduck: /readyz is 503, DNS still answers
	closing    atomic.Bool // set by Stop: the listeners are closing

	signer *dnssec.Signer // signs the zones of --dnssec-key; nil without
	tap    *tap.Tap       // sends dnstap messages to --dnstap; nil without

	nodeLocal    nodeLocalState   // node-local mode's progress
	nodeLocalDNS dnsserver.Config // what node-local mode binds once ready
	zones        []string         // the zones answered, for the log

	corefileDone   chan struct{} // closed when the --corefile watch ends; nil without one
	closeForwarder func()        // stops the built forwarder's background work; nil if none
	loops          LoopChecker   // the forwarder's loop check; nil if it has none
	stopNotify     func()        // stops the notifier and waits for it; nil if none
}

// ErrInterrupted, as the cause of Run's context (context.WithCancelCause),
// stops Run without the lameduck: a skydns stopped from a terminal (Ctrl-C)
// has no Service to drain it, so waiting would only delay the exit.
var ErrInterrupted = errors.New("interrupted")

// Run starts the daemon and runs it until ctx ends or a part of it fails.
// When ctx ends it first spends cfg.Lameduck answering with /readyz 503
// (unless ctx's cause is ErrInterrupted), then shuts down within
// cfg.ShutdownTimeout; after a failure it shuts
// down at once. An unreachable etcd is not a failure: the last snapshot
// keeps being served. Run also sets the process's GC target to
// cfg.GCPercent and its memory limit from cfg.MemoryLimitFactor (Start,
// which tests share, does not).
func Run(ctx context.Context, cfg Config, logger *slog.Logger) error {
	if cfg.GCPercent >= 0 {
		debug.SetGCPercent(cfg.GCPercent)
	}
	if cfg.MemoryLimitFactor > 0 && !memlimit.Follow(ctx, cfg.MemoryLimitFactor, memlimit.DefaultHeadroom) {
		logger.Info("GOMEMLIMIT is set: --memory-limit-factor is ignored")
	}
	d, err := Start(cfg, logger)
	if err != nil {
		return err
	}
	var failure error
	select {
	case <-ctx.Done():
		d.shutdownFor(context.Cause(ctx))
	case failure = <-d.Err():
		logger.Error("shutting down after a failure", "err", failure)
	}
	stopCtx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	return errors.Join(failure, d.Stop(stopCtx))
}

// shutdownFor logs why the daemon stops and spends the lameduck, unless
// cause is an interrupt.
func (d *Daemon) shutdownFor(cause error) {
	if errors.Is(cause, ErrInterrupted) {
		d.logger.Info("shutting down", "reason", cause, "lameduck", "skipped")
		d.lameduck.Store(true)
		return
	}
	d.logger.Info("shutting down", "reason", cause, "lameduck", d.cfg.Lameduck)
	if d.cfg.NodeLocal.Enabled() && d.stepAside() {
		return
	}
	d.Lameduck(context.Background())
}

// Start starts every part of the daemon and returns once DNS and HTTP
// serve; the mirror syncs in the background. In node-local mode DNS is
// bound later, in the background, once the node is set up and the mirror
// has synced (startNodeLocal). cfg must have been validated.
func Start(cfg Config, logger *slog.Logger) (_ *Daemon, err error) {
	logger.Info("starting skydns", "config", cfg)
	d := &Daemon{cfg: cfg, logger: logger, stopped: make(chan struct{}), fatal: make(chan error, 1)}
	defer func() {
		if err != nil {
			d.Stop(context.Background()) // what did start
		}
	}()
	res, err := resolver.New(cfg.resolverConfig())
	if err != nil {
		return nil, fmt.Errorf("--zone: %w", err)
	}
	if err := d.connectEtcd(); err != nil {
		return nil, err
	}
	d.metrics = NewMetrics(d.staleSeconds)
	if err := d.startTap(); err != nil {
		return nil, err
	}
	forwarder, err := d.forwarder()
	if err != nil {
		return nil, err
	}
	d.loops, _ = forwarder.(LoopChecker)
	changes := d.fastPathChanges()
	d.mirror = NewMirror(cfg.Prefix, d.metrics, logger.With("component", "mirror"))
	d.clusterset = newClustersetZone(cfg, logger.With("component", "clusterset"))
	if d.clusterset != nil {
		d.clusterset.observe = d.metrics.clustersetObserver()
	}
	d.mirror.setHooks(recordChanges(changes, cfg.Prefix), d.notifyOnChange(res, snapshotHook(cfg, forwarder)))
	if err := d.serve(res, forwarder, changes); err != nil {
		return nil, err
	}
	d.startLoop()
	d.watchCorefile(forwarder)
	if cfg.NodeLocal.Enabled() {
		d.startNodeLocal()
	}
	return d, nil
}

// staleSeconds is the mirror's StaleSeconds, for the metrics, which are
// made before the mirror.
func (d *Daemon) staleSeconds() float64 { return d.mirror.StaleSeconds() }

// fastPathChanges is the log of what each snapshot changed that the fast
// path's caches read; nil without --fast-path.
func (d *Daemon) fastPathChanges() *fastpath.Changes {
	if !d.cfg.FastPath || len(d.cfg.Rewrites) > 0 || len(d.cfg.Templates) > 0 { // the fast path does neither
		return nil
	}
	return fastpath.NewChanges()
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
	return d.connectBroker()
}

// connectBroker connects the client of --clusterset-etcd-*, if given.
func (d *Daemon) connectBroker() error {
	if d.cfg.ClustersetPrefix == "" || len(d.cfg.ClustersetEtcd.Endpoints) == 0 {
		return nil
	}
	broker, err := d.cfg.ClustersetEtcd.New(zap.NewNop())
	if err != nil {
		return fmt.Errorf("clusterset etcd: %w", err)
	}
	d.broker = broker
	return nil
}

// clustersetSource is the client clusterset.local is read through, and
// its pacing.
func (d *Daemon) clustersetSource() (*clientv3.Client, WatchTiming) {
	timing := d.cfg.watchTiming()
	if d.broker == nil {
		return d.client, timing
	}
	timing.RequestTimeout = d.cfg.ClustersetEtcd.RequestTimeout
	return d.broker, timing
}

func (d *Daemon) startEmbedded() error {
	e, err := startEmbeddedEtcd(d.cfg, d.logger.With("component", "etcd"))
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
	d.closeForwarder = f.Close
	f.SetTap(d.tap)
	return f, nil
}

// snapshotHook is what runs on every published snapshot: the forwarder's
// stub domains and live settings, then cfg.OnSnapshot.
func snapshotHook(cfg Config, forwarder Forwarder) func(*snapshot.Snapshot) {
	stubs, _ := forwarder.(StubSetter)
	live, _ := forwarder.(LiveSetter)
	return func(s *snapshot.Snapshot) {
		if stubs != nil {
			stubs.SetStubsFrom(s, cfg.Zones)
		}
		if live != nil {
			live.SetLiveFrom(s, cfg.Zones[0])
		}
		if cfg.OnSnapshot != nil {
			cfg.OnSnapshot(s)
		}
	}
}

// notifyOnChange returns hook, followed, with --notify targets, by telling
// a notifier that the zones changed; it starts the notifier.
func (d *Daemon) notifyOnChange(res *resolver.Resolver, hook func(*snapshot.Snapshot)) func(*snapshot.Snapshot) {
	if len(d.cfg.Notify) == 0 {
		return hook
	}
	targets, _ := transfer.ParseTargets(d.cfg.Notify) // checked by Validate
	n := transfer.NewNotifier(targets, res.Zones(), transfer.DefaultNotifyInterval, d.logger.With("component", "notify"))
	n.Observe = d.metrics.observeNotify
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); n.Run(ctx) }()
	d.stopNotify = func() { cancel(); <-done }
	return func(s *snapshot.Snapshot) {
		hook(s)
		n.Changed()
	}
}

// transferServer answers zone transfers to --transfer-to; nil without it
// (the resolver refuses them).
func (d *Daemon) transferServer(res *resolver.Resolver) func(dnsserver.Query, dns.ResponseWriter) *dns.Msg {
	if len(d.cfg.TransferTo) == 0 {
		return nil
	}
	acl, _ := transfer.ParseACL(d.cfg.TransferTo) // checked by Validate
	s := &transfer.Server{Resolver: res, Snapshot: d.mirror.Snapshot, ACL: acl, Logger: d.logger.With("component", "transfer"),
		Observe: d.metrics.observeTransfer}
	return s.Transfer
}

// serve starts the DNS and HTTP servers; with changes, the fast path
// serves too. In node-local mode DNS is bound later (startNodeLocal).
func (d *Daemon) serve(res *resolver.Resolver, forwarder Forwarder, changes *fastpath.Changes) error {
	cfg, err := d.dnsConfig(res, forwarder, changes)
	if err != nil {
		return err
	}
	d.zones = res.Zones()
	if d.cfg.NodeLocal.Enabled() {
		d.nodeLocalDNS = cfg
		d.nodeLocal.set(fmt.Errorf("DNS not bound on %s: setting up", d.cfg.DNSAddr)) // before /readyz serves
	} else if err := d.startDNS(cfg); err != nil {
		return err
	}
	return d.serveHTTP()
}

// dnsConfig is the DNS servers' configuration.
func (d *Daemon) dnsConfig(res *resolver.Resolver, forwarder Forwarder, changes *fastpath.Changes) (dnsserver.Config, error) {
	signer, err := d.cfg.newSigner()
	if err != nil {
		return dnsserver.Config{}, err
	}
	d.signer = signer
	if signer != nil {
		d.logger.Info("signing with DNSSEC", "zones", signer.Zones(), "keys", signer.KeyTags())
	}
	names := newZoneNames(res)
	rewrites, _ := rewrite.ParseAll(d.cfg.Rewrites)    // checked by Validate
	templates, _ := template.ParseAll(d.cfg.Templates) // checked by Validate
	passOn := fallthroughRule{reverse: d.cfg.ReverseFallthrough, zones: d.cfg.ZoneFallthrough}
	router := &router{resolver: res, mirror: d.mirror, forwarder: forwarder, panicked: d.panicked,
		rotate: d.cfg.Rotate, autopath: d.cfg.Autopath, passOn: passOn,
		signer: signer, names: names, rewrites: rewrites, templates: templates, clusterset: d.clusterset}
	cfg := dnsserver.Config{
		Addr:               d.cfg.DNSAddr,
		Responder:          router,
		RecursionAvailable: router.recursionAvailable,
		MaxUDPSize:         dnsserver.DefaultMaxUDPSize,
		UDPSockets:         d.cfg.UDPSockets,
		FastPathEntries:    d.cfg.FastPathAnswers,
		ReusePort:          d.cfg.NodeLocal.Enabled(),
		FastStats:          d.metrics.startAnswers(res),
		Observe:            d.observer(),
		Invalid:            func(error) { d.metrics.observeMalformedPacket() },
		Panicked:           d.panicked,
		Logger:             d.logger.With("component", "dns"),
		Transfer:           d.transferServer(res),
	}
	if cfg.RRL, err = d.cfg.RRL.Limiter(); err != nil {
		return dnsserver.Config{}, err
	}
	d.cfg.TCP.apply(&cfg)
	if changes != nil {
		lender, _ := forwarder.(CacheLender)
		cfg.FastPath = &cacheFiller{resolver: res, mirror: d.mirror, maxUDPSize: cfg.MaxUDPSize, rotate: d.cfg.Rotate, autopath: d.cfg.Autopath,
			passOn: passOn, signer: signer, names: names, lender: lender}
		cfg.FastPathChanges = changes
		cfg.FastLog = d.fastLog()
	}
	if err := d.tlsServing(&cfg); err != nil {
		return dnsserver.Config{}, err
	}
	return cfg, nil
}

// startDNS binds cfg.Addr and serves DNS on it.
func (d *Daemon) startDNS(cfg dnsserver.Config) error {
	srv, err := dnsserver.Start(cfg)
	if err != nil {
		return fmt.Errorf("--dns-addr: %w", err)
	}
	d.dnsMu.Lock()
	d.dns = srv
	d.dnsMu.Unlock()
	d.metrics.exportAnswers(srv.Addr())
	if d.loops != nil {
		d.loops.CheckLoops() // the probes must find this server answering
	}
	d.logger.Info("serving DNS", "addr", srv.Addr(), "zones", d.zones, "fast-path", d.cfg.FastPath, "udp-sockets", d.cfg.UDPSockets,
		"tls-addr", srv.TLSAddr(), "dnstap", d.cfg.Dnstap.Target)
	return nil
}

// dnsServer is the DNS server, nil while node-local mode has not bound it.
func (d *Daemon) dnsServer() *dnsserver.Server {
	d.dnsMu.Lock()
	defer d.dnsMu.Unlock()
	return d.dns
}

// serveHTTP serves /healthz, /readyz and /metrics on --http-addr (shared
// with SO_REUSEPORT in node-local mode), and on --health-socket if set.
func (d *Daemon) serveHTTP() error {
	h := newHTTPHandler(d.readiness, d.metrics.Registry, d.cfg.Pprof)
	logger := d.logger.With("component", "http")
	ln, err := listenHTTP(d.cfg.HTTPAddr, d.cfg.NodeLocal.Enabled())
	if err != nil {
		return err
	}
	d.http = startHTTP(ln, h, logger)
	d.logger.Info("serving HTTP", "addr", d.http.addr, "pprof", d.cfg.Pprof)
	if d.cfg.HealthSocket == "" {
		return nil
	}
	if ln, err = listenHealthSocket(d.cfg.HealthSocket); err != nil {
		return err
	}
	d.health = startHTTP(ln, h, logger)
	d.logger.Info("serving /healthz and /readyz", "socket", d.cfg.HealthSocket)
	return nil
}

// queryLog is the query log --log-queries asks for; nil for none.
func (d *Daemon) queryLog() *querylog.Logger {
	classes, _ := querylog.ParseClasses(d.cfg.LogQueries) // checked by Validate
	logger := d.cfg.QueryLog
	if logger == nil {
		logger = d.logger
	}
	return querylog.New(logger, classes, d.cfg.LogQueriesSample)
}

// observer is what sees every answer of the ordinary path: the metrics,
// and the query log when there is one.
func (d *Daemon) observer() func(dnsserver.Exchange) {
	qlog := d.queryLog()
	if qlog == nil && d.tap == nil {
		return d.metrics.observeExchange
	}
	return func(e dnsserver.Exchange) {
		d.metrics.observeExchange(e)
		if qlog != nil {
			qlog.Msg(e.Client, e.Proto, e.Request, e.Response, e.Duration)
		}
		if d.tap != nil {
			d.tapExchange(e)
		}
	}
}

// panicked logs and counts a panic that answering one query caused; the
// query was answered SERVFAIL and the server goes on.
func (d *Daemon) panicked(path string, packet []byte, value any) {
	d.metrics.observePanic(path)
	d.logger.Error("a query caused a panic: answered SERVFAIL", "path", path, "packet", hex.EncodeToString(packet),
		"panic", fmt.Sprint(value), "stack", string(debug.Stack()))
}

// startLoop runs the mirror's list-then-watch loop until Stop.
func (d *Daemon) startLoop() {
	ctx, cancel := context.WithCancel(context.Background())
	d.stopLoop = cancel
	d.loopDone = make(chan struct{})
	go func() {
		defer close(d.loopDone)
		var wg sync.WaitGroup
		defer wg.Wait()
		if d.clusterset != nil {
			src, timing := d.clustersetSource()
			wg.Go(func() { d.clusterset.run(ctx, src, timing) })
		}
		d.mirror.Run(ctx, d.client, d.cfg.watchTiming())
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

// DNSAddr is the host:port DNS is served on; in node-local mode
// --dns-addr, bound or not yet.
func (d *Daemon) DNSAddr() string {
	if srv := d.dnsServer(); srv != nil {
		return srv.Addr()
	}
	return d.cfg.DNSAddr
}

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
	d.closing.Store(true)
	var errs []error
	d.stopNodeLocal()
	d.stopSharing()
	if srv := d.dnsServer(); srv != nil {
		errs = append(errs, srv.Shutdown(ctx))
	}
	if d.http != nil {
		errs = append(errs, d.http.shutdown(ctx))
	}
	if d.health != nil {
		errs = append(errs, d.health.shutdown(ctx))
	}
	if d.stopLoop != nil {
		d.stopLoop()
		<-d.loopDone
	}
	if d.corefileDone != nil {
		<-d.corefileDone
	}
	if d.closeForwarder != nil {
		d.closeForwarder()
	}
	d.tap.Close()
	if d.stopNotify != nil {
		d.stopNotify()
	}
	if d.client != nil {
		d.client.Close()
	}
	if d.broker != nil {
		d.broker.Close()
	}
	if d.etcd != nil {
		d.etcd.Close()
		d.logger.Info("embedded etcd stopped")
	}
	return errors.Join(errs...)
}
