package skydns

import (
	"log/slog"
	"net"
	"net/netip"
	"os"
	"runtime"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/etcdstore"
	"github.com/kubesky/kubesky/internal/flagenv"
	"github.com/kubesky/kubesky/internal/logging"
	"github.com/kubesky/kubesky/internal/version"
	"github.com/kubesky/kubesky/skydns/dnssec"
	"github.com/kubesky/kubesky/skydns/fastpath"
	"github.com/kubesky/kubesky/skydns/forward"
	"github.com/kubesky/kubesky/skydns/resolver"
	"github.com/kubesky/kubesky/skydns/snapshot"
)

// EnvPrefix is the prefix of the environment variables flags fall back to:
// --dns-addr reads SKYDNS_DNS_ADDR.
const EnvPrefix = "SKYDNS"

// Config is everything the daemon needs to run.
type Config struct {
	// DNSAddr is where DNS is served, on UDP and TCP.
	DNSAddr string
	// FastPath answers plain UDP queries from packed answers cached per
	// snapshot (skydns/fastpath); the rest take the ordinary path.
	FastPath bool
	// UDPSockets is how many UDP sockets share DNSAddr's port
	// (SO_REUSEPORT), each read by its own goroutine.
	UDPSockets int
	// FastPathAnswers bounds the packed answers the fast path keeps, all
	// sockets together (about 600 bytes each for an A answer of five
	// records): a full store is emptied before the next answer is kept.
	FastPathAnswers int
	// GCPercent is the Go collector's target (as GOGC) that Run sets: the
	// heap may grow to 1+GCPercent/100 times what is live before a
	// collection. Fast-path answers allocate nothing, so a low target
	// costs little; -1 leaves the runtime's own (GOGC, or 100).
	GCPercent int
	// MemoryLimitFactor, when not 0, keeps the Go runtime's soft memory
	// limit at the live heap times this plus memlimit.DefaultHeadroom,
	// recomputed after every collection (internal/memlimit) that Run
	// starts; GOMEMLIMIT in the environment overrides it.
	MemoryLimitFactor float64
	// TCP bounds what TCP clients may hold (the --tcp-* flags).
	TCP TCPLimits
	// HTTPAddr serves /healthz, /readyz and /metrics.
	HTTPAddr string
	// HealthSocket, if set, is a Unix socket serving /healthz and /readyz
	// too, for `skydns probe` (pods sharing the host network cannot tell
	// their HTTP ports apart).
	HealthSocket string
	// NodeLocal, when its Interface is set, serves DNS on a node-local
	// address (docs/node-local.md).
	NodeLocal NodeLocalConfig
	// Pprof mounts net/http/pprof under /debug/pprof/ on HTTPAddr.
	Pprof bool
	// Zones are the forward zones answered; in-addr.arpa. and ip6.arpa.
	// are always answered too.
	Zones []string
	// Prefix is the etcd key prefix of the records.
	Prefix string
	// ClustersetPrefix, if set, is the etcd key prefix of the
	// Multi-Cluster Services exports (contract/clusterset) that
	// clusterset.local is answered from; "" leaves that zone alone.
	ClustersetPrefix string
	// ClusterID names this cluster in the clusterset: its ClusterSetIP
	// names answer its own clusterset IPs.
	ClusterID string
	// ClustersetTTL is the TTL of the clusterset.local records.
	ClustersetTTL uint32
	// ClustersetEtcd reaches the etcd the clusterset is read from (the
	// --clusterset-etcd-* flags); no endpoints means Etcd's.
	ClustersetEtcd etcdstore.ClientOptions
	// TTL is the TTL of records that carry none.
	TTL uint32
	// Priority is the SRV priority and MX preference of records that
	// carry none (resolver.DefaultPriority; CoreDNS's kubernetes plugin 0).
	Priority uint16
	// MaxTTL caps every TTL served, in seconds: records' from etcd, the
	// SOA's and negative answers', and upstream answers' (also how long
	// the forwarder caches them). See resolver.DefaultMaxTTL for why an hour.
	MaxTTL int
	// PodRecords is how names under pod.<first zone> are answered:
	// disabled, insecure or verified (see resolver.PodMode).
	PodRecords string
	// NSAddrs are the DNS Service's addresses: the apex NS target
	// ns.dns.<zone> answers them (see resolver.Config.NSAddrs).
	NSAddrs []net.IP
	// Rotate turns A, AAAA and SRV (of one priority) RRsets by one record
	// per answer, so clients of a headless service spread out.
	Rotate bool
	// Autopath answers a pod's first search-path query with the answer its
	// search path reaches; it needs PodRecords "verified".
	Autopath bool
	// Rewrites are CoreDNS rewrite name rules, applied in order before a
	// query is answered (package rewrite). The fast path is off with them.
	Rewrites []string
	// Templates are CoreDNS template blocks as JSON (package template),
	// answered after the rewrites, before the zones. The fast path is off
	// with them.
	Templates []string
	// ReverseFallthrough forwards a reverse (PTR) name that no record
	// answers to the forwarder, for clients that may recurse, instead of
	// answering NXDOMAIN.
	ReverseFallthrough bool
	// PodNamespaces, if any, are the only namespaces whose pod names
	// exist.
	PodNamespaces []string
	// ZoneFallthrough are zones of Zones whose names no record answers go
	// to the forwarder, as reverse names do with ReverseFallthrough.
	ZoneFallthrough []string
	// Etcd says how to reach etcd; with no endpoints an embedded etcd is
	// started.
	Etcd etcdstore.ClientOptions
	// EtcdProbeInterval is how often etcd's reachability is checked while
	// the watch is quiet.
	EtcdProbeInterval time.Duration
	// EtcdStallAfter is how long a watch may stay silent while etcd
	// answers probes before it is opened again (0: 5 probe intervals).
	EtcdStallAfter time.Duration
	// EtcdRelistJitter spreads the re-lists after a compaction over
	// [0, EtcdRelistJitter).
	EtcdRelistJitter time.Duration
	// EtcdDataDir is the embedded etcd's data dir.
	EtcdDataDir string
	// EmbeddedEtcdAddr is the embedded etcd's client host:port.
	EmbeddedEtcdAddr string
	// LogLevel is debug, info, warn or error.
	LogLevel string
	// LogFormat is text (logfmt) or json, for every line.
	LogFormat string
	// LogQueries are the answers logged one line each: none, denial,
	// error, all, or a comma-separated list (see skydns/querylog).
	LogQueries string
	// LogQueriesSample is the fraction of those answers logged (1: all).
	LogQueriesSample float64
	// QueryLog, if set, is where query lines go, at level INFO whatever
	// LogLevel says; nil: the daemon's logger. Not a flag.
	QueryLog *slog.Logger
	// Lameduck is how long Run keeps answering after a stop signal with
	// /readyz already 503, so that Services and load balancers stop
	// sending queries here before the listeners close.
	Lameduck time.Duration
	// ShutdownTimeout bounds the graceful shutdown after the lameduck.
	ShutdownTimeout time.Duration
	// MaxStale, if positive, turns /readyz 503 once the snapshot has not
	// been confirmed current by etcd for that long; zero keeps serving a
	// stale snapshot as ready (staleness is reported, not acted on).
	MaxStale time.Duration

	// TransferTo are the client networks (CIDRs or addresses) allowed to
	// transfer the zones (AXFR, IXFR) over TCP; empty: every transfer is
	// REFUSED.
	TransferTo []string
	// Notify are the secondaries (IP or IP:port, port 53 by default) sent
	// a NOTIFY of every zone when the records change, at most once per
	// second.
	Notify []string

	// DNSSECKeys are BIND-style key files (K<zone>+013+<tag>.key, with
	// their .private beside them) of the served zones to sign online
	// (see skydns/dnssec); empty: nothing is signed.
	DNSSECKeys []string
	// dnssecKeys are the keys DNSSECKeys name, read by Validate.
	dnssecKeys []dnssec.Key

	// Forward configures the forwarder for names outside the zones (the
	// --upstream, --allow-recursion, --cache-*, --forward-* and
	// --stub-domain flags); used when Forwarder is nil.
	Forward forward.Config
	// RRL limits UDP answers per client network (the --rrl-* flags).
	RRL RRLConfig
	// Dnstap sends dnstap messages to a reader (the --dnstap* flags).
	Dnstap DnstapConfig
	// TLS serves DNS over TLS (the --tls-* flags).
	TLS TLSConfig
	// Forwarder, if set, answers names outside the zones instead of a
	// forwarder built from Forward (Refuse answers REFUSED). Not a flag.
	Forwarder Forwarder
	// Corefile, if set, is a CoreDNS Corefile whose skydns settings Parse
	// takes as flags (see package corefile and docs/corefile.md).
	Corefile string
	// corefileKube2sky are the kube2sky flags the Corefile asks for,
	// which skydns cannot apply; logged at start.
	corefileKube2sky []string
	// corefile is what a change of the Corefile is judged against; nil
	// without --corefile.
	corefile *corefileState
	// corefileInterval is how often the Corefile is read for a change.
	corefileInterval time.Duration

	// OnSnapshot, if set, sees every published snapshot (for example to
	// read stub-domain records). It runs on the watch goroutine and must
	// be quick.
	OnSnapshot func(*snapshot.Snapshot)
}

// DefaultGCPercent is --gc-percent's default: a heap a quarter above what
// is live (bench/results/skydns-memory.md has the measurements).
const DefaultGCPercent = 25

// DefaultConfig returns the settings the flags default to.
func DefaultConfig() Config {
	return Config{
		DNSAddr:            "127.0.0.1:1053",
		FastPath:           true,
		UDPSockets:         runtime.GOMAXPROCS(0),
		FastPathAnswers:    fastpath.DefaultMaxEntries,
		GCPercent:          DefaultGCPercent,
		TCP:                DefaultTCPLimits(),
		HTTPAddr:           "127.0.0.1:8081",
		Zones:              []string{"cluster.local."},
		Prefix:             contract.DefaultPrefix,
		TTL:                30,
		ClustersetTTL:      5,
		MaxTTL:             resolver.DefaultMaxTTL,
		Priority:           resolver.DefaultPriority,
		PodRecords:         string(resolver.PodsDisabled),
		Rotate:             true,
		ReverseFallthrough: true,
		Etcd:               etcdstore.DefaultClientOptions(),
		ClustersetEtcd: etcdstore.DefaultClientOptions().Prefixed("clusterset-",
			"the clusterset's etcd, if not the records'"),
		EtcdProbeInterval: 2 * time.Second,
		EtcdRelistJitter:  2 * time.Second,
		EtcdDataDir:       "./data/etcd",
		EmbeddedEtcdAddr:  "127.0.0.1:2379",
		LogLevel:          "info",
		Lameduck:          5 * time.Second,
		LogFormat:         logging.FormatText,
		LogQueries:        "none",
		LogQueriesSample:  1,
		ShutdownTimeout:   10 * time.Second,
		NodeLocal:         NodeLocalConfig{Notrack: true},
		Forward:           forward.DefaultConfig(),
		RRL:               DefaultRRLConfig(),
		Dnstap:            DefaultDnstapConfig(),
		corefileInterval:  defaultCorefileInterval,
	}
}

// AddFlags registers the daemon's flags on fs, bound to c's fields, with
// c's current values as defaults.
func (c *Config) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.DNSAddr, "dns-addr", c.DNSAddr, "host:port to serve DNS on, UDP and TCP (use 0.0.0.0:53 in a cluster; the default needs no privileges)")
	fs.BoolVar(&c.FastPath, "fast-path", c.FastPath, "answer plain UDP queries from answers packed once per snapshot (false: every query takes the ordinary path)")
	fs.IntVar(&c.UDPSockets, "udp-sockets", c.UDPSockets, "UDP sockets sharing the DNS port (SO_REUSEPORT), each with its own reader (default: GOMAXPROCS)")
	fs.IntVar(&c.FastPathAnswers, "fast-path-answers", c.FastPathAnswers, "most packed answers the fast path keeps, ~600 bytes each (a full store is emptied and fills again from the names asked)")
	fs.IntVar(&c.GCPercent, "gc-percent", c.GCPercent, "Go GC target, as GOGC: the heap may grow to 1+N/100 times its live size before a collection (-1: keep GOGC's setting)")
	fs.Float64Var(&c.MemoryLimitFactor, "memory-limit-factor", c.MemoryLimitFactor, "keep Go's soft memory limit at the live heap times this plus 8 MiB, set again after every collection, so freed heap goes back to the OS at once (0: none; GOMEMLIMIT overrides)")
	c.TCP.addFlags(fs)
	fs.StringVar(&c.HTTPAddr, "http-addr", c.HTTPAddr, "host:port serving /healthz, /readyz and /metrics")
	fs.StringVar(&c.HealthSocket, "health-socket", c.HealthSocket, "Unix socket path serving /healthz and /readyz as --http-addr does, for the probe command 'skydns probe' (a stale socket file is removed at start; empty: none)")
	c.NodeLocal.addFlags(fs)
	fs.BoolVar(&c.Pprof, "pprof", c.Pprof, "serve net/http/pprof under /debug/pprof/ on --http-addr")
	fs.StringSliceVar(&c.Zones, "zone", c.Zones, "zone to answer for, repeatable (in-addr.arpa. and ip6.arpa. are always answered)")
	fs.StringVar(&c.Prefix, "prefix", c.Prefix, "etcd key prefix of the SkyDNS records")
	fs.Uint32Var(&c.TTL, "ttl", c.TTL, "TTL in seconds of records that set none")
	fs.Uint16Var(&c.Priority, "priority", c.Priority, "SRV priority and MX preference of records that set none (CoreDNS's kubernetes plugin answers 0)")
	fs.StringVar(&c.ClustersetPrefix, "clusterset-prefix", c.ClustersetPrefix, "etcd key prefix of the Multi-Cluster Services exports (e.g. /clusterset): answer clusterset.local from them (empty: not answered)")
	fs.StringVar(&c.ClusterID, "cluster-id", c.ClusterID, "this cluster's ID in the clusterset, as kube2sky's --cluster-id: ClusterSetIP names answer this cluster's clusterset IPs (required with --clusterset-prefix)")
	fs.Uint32Var(&c.ClustersetTTL, "clusterset-ttl", c.ClustersetTTL, "TTL in seconds of the clusterset.local records")
	c.ClustersetEtcd.AddFlags(fs)
	fs.IntVar(&c.MaxTTL, "max-ttl", c.MaxTTL, "largest TTL in seconds served, for records from etcd and answers from upstream alike, and longest an upstream answer is cached (Kubernetes records change)")
	fs.StringVar(&c.PodRecords, "pod-records", c.PodRecords, "names <a-b-c-d>.<ns>.pod.<first zone>: disabled (NXDOMAIN), insecure (synthesized for any address) or verified (only the pods kube2sky --pod-records=verified writes)")
	fs.StringSliceVar(&c.PodNamespaces, "pod-namespaces", c.PodNamespaces, "only these namespaces' pod names exist, comma separated; the others' are NXDOMAIN (CoreDNS's namespaces with pods; empty: every namespace)")
	fs.IPSliceVar(&c.NSAddrs, "ns-addrs", c.NSAddrs, "addresses of the DNS Service (e.g. 10.96.0.10), comma separated: the zone apex's NS ns.dns.<zone> resolves to them (default: --dns-addr's IP when it is a specific one)")
	fs.BoolVar(&c.Rotate, "rotate", c.Rotate, "turn A, AAAA and SRV (of one priority) records by one per answer, so clients spread out (false: the same order every time)")
	fs.BoolVar(&c.ReverseFallthrough, "reverse-fallthrough", c.ReverseFallthrough, "forward a PTR question in in-addr.arpa. or ip6.arpa. that no record answers to the upstreams, for clients that may recurse, as kube-dns and CoreDNS's `fallthrough in-addr.arpa ip6.arpa` do (false: NXDOMAIN)")
	fs.StringSliceVar(&c.ZoneFallthrough, "zone-fallthrough", c.ZoneFallthrough, "zones (each a --zone) whose names no record answers are forwarded to the upstreams, for clients that may recurse, as CoreDNS's kubernetes `fallthrough` does (default none: NXDOMAIN)")
	fs.BoolVar(&c.Autopath, "autopath", c.Autopath, "answer a pod's first search-path query (<name>.<ns>.svc.<zone>) with what its search path reaches, behind a CNAME (needs --pod-records=verified)")
	fs.StringArrayVar(&c.Rewrites, "rewrite", c.Rewrites, "a CoreDNS rewrite name rule, '[stop|continue] name [exact|prefix|suffix|substring|regex] FROM TO [answer auto]', applied before answering; repeatable, in order (turns the fast path off)")
	fs.StringArrayVar(&c.Templates, "template", c.Templates, "a CoreDNS template block as JSON (the Corefile reader makes it), answering the questions it matches before the zones; repeatable, in order (turns the fast path off)")
	c.Etcd.AddFlags(fs)
	fs.DurationVar(&c.EtcdProbeInterval, "etcd-probe-interval", c.EtcdProbeInterval, "how often etcd's reachability is checked while the watch is quiet")
	fs.DurationVar(&c.EtcdStallAfter, "etcd-stall-after", c.EtcdStallAfter, "once etcd sends progress notifications, how long the watch may deliver nothing while etcd answers probes before it is opened again (0: 5 × --etcd-probe-interval)")
	fs.DurationVar(&c.EtcdRelistJitter, "etcd-relist-jitter", c.EtcdRelistJitter, "after a compaction, wait a random time up to this before listing again, so that many skydns do not list at once (0: at once)")
	fs.StringVar(&c.EtcdDataDir, "etcd-data-dir", c.EtcdDataDir, "data dir of the embedded etcd (used when --etcd-endpoints is empty)")
	fs.StringVar(&c.EmbeddedEtcdAddr, "embedded-etcd-addr", c.EmbeddedEtcdAddr, "client host:port of the embedded etcd (used when --etcd-endpoints is empty)")
	fs.StringVar(&c.LogLevel, "log-level", c.LogLevel, "log level: debug, info, warn or error")
	fs.StringVar(&c.LogFormat, "log-format", c.LogFormat, "log line format: text (key=value) or json")
	fs.StringVar(&c.LogQueries, "log-queries", c.LogQueries, "answers logged one line each: none, denial (NXDOMAIN, NODATA), error (SERVFAIL, REFUSED, FORMERR, ...), all, or a comma-separated list")
	fs.Float64Var(&c.LogQueriesSample, "log-queries-sample", c.LogQueriesSample, "fraction of the answers --log-queries selects that are logged, above 0 and at most 1")
	fs.DurationVar(&c.Lameduck, "lameduck", c.Lameduck, "after SIGTERM, how long /readyz is 503 while DNS keeps answering, before the listeners close (0: close at once)")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", c.ShutdownTimeout, "how long a shutdown waits for queries in progress, after the lameduck")
	fs.StringSliceVar(&c.TransferTo, "transfer-to", c.TransferTo, "client networks (CIDRs or IP addresses) allowed to transfer the zones over TCP (AXFR, IXFR), comma separated (empty: transfers are REFUSED)")
	fs.StringSliceVar(&c.Notify, "notify", c.Notify, "secondaries (IP or IP:port, port 53 by default) sent a NOTIFY of every zone when the records change, at most once a second (needs --transfer-to)")
	fs.DurationVar(&c.MaxStale, "max-stale", c.MaxStale, "turn /readyz 503 once the snapshot has not been confirmed current by etcd for this long (0: never; a stale snapshot keeps being served either way)")
	fs.StringSliceVar(&c.DNSSECKeys, "dnssec-key", c.DNSSECKeys, "DNSSEC key files K<zone>+013+<tag>.key (ECDSA P-256; the .private beside it), repeatable: the zones of the keys are signed online for queries with the DO bit (a CSK, or KSKs and ZSKs; two of one role during a rollover)")
	fs.StringVar(&c.Corefile, "corefile", c.Corefile, "a CoreDNS Corefile (e.g. the coredns ConfigMap mounted as a file) whose settings are taken as skydns's flags, all or none: at start one that kubesky refuses, or that gives a flag also given here another value, is an error ('kubesky corefile check' says why); read again every 5s, a change of the upstreams, stub domains, recursion ACL or cache size applies at once, any other change is refused and logged, the running configuration kept")
	c.Forward.AddFlags(fs)
	c.RRL.AddFlags(fs)
	c.Dnstap.AddFlags(fs)
	c.TLS.AddFlags(fs)
}

// Parse parses args into fs (on which AddFlags was called), fills the
// flags not given from the environment (SKYDNS_<FLAG>, and ETCD_<FLAG> or
// CLUSTERSET_ETCD_<FLAG> for the --etcd-* and --clusterset-etcd-* flags),
// then from --corefile, and validates the result.
func (c *Config) Parse(fs *pflag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := flagenv.Apply(fs, EnvPrefix); err != nil {
		return err
	}
	if err := c.applyCorefile(fs); err != nil {
		return err
	}
	return c.Validate()
}

// Embedded reports whether the daemon runs its own etcd.
func (c Config) Embedded() bool { return len(c.Etcd.Endpoints) == 0 }

// LogValue is the effective configuration, without secrets, for the log.
func (c Config) LogValue() slog.Value {
	attrs := []slog.Attr{
		slog.String("dns-addr", c.DNSAddr), slog.Bool("fast-path", c.FastPath), slog.Int("udp-sockets", c.UDPSockets), slog.Int("fast-path-answers", c.FastPathAnswers),
		slog.Int("gc-percent", c.GCPercent), slog.Float64("memory-limit-factor", c.MemoryLimitFactor), c.TCP.logValue(),
		slog.String("http-addr", c.HTTPAddr), slog.String("health-socket", c.HealthSocket),
		slog.String("node-local-interface", c.NodeLocal.Interface), slog.Bool("node-local-notrack", c.NodeLocal.Notrack),
		slog.String("node-local-peers", c.NodeLocal.PeerDir),
		slog.Any("zone", c.Zones), slog.String("prefix", c.Prefix), slog.Any("ttl", c.TTL), slog.Any("priority", c.Priority), slog.Int("max-ttl", c.MaxTTL),
		slog.String("pod-records", c.PodRecords), slog.Any("ns-addrs", c.NSAddrs), slog.Bool("rotate", c.Rotate), slog.Bool("autopath", c.Autopath),
		slog.String("log-level", c.LogLevel), slog.String("log-format", c.LogFormat),
		slog.String("log-queries", c.LogQueries), slog.Float64("log-queries-sample", c.LogQueriesSample),
		slog.Bool("pprof", c.Pprof),
		slog.Duration("lameduck", c.Lameduck), slog.Duration("shutdown-timeout", c.ShutdownTimeout),
		slog.Duration("max-stale", c.MaxStale),
		slog.String("corefile", c.Corefile), slog.Any("corefile-kube2sky", c.corefileKube2sky),
		slog.String("clusterset-prefix", c.ClustersetPrefix), slog.Any("clusterset-etcd-endpoints", c.ClustersetEtcd.Endpoints),
		slog.Any("transfer-to", c.TransferTo), slog.Any("notify", c.Notify), slog.Any("dnssec-key", c.DNSSECKeys),
		slog.Group("forward", "upstream", c.Forward.Upstreams, "allow-recursion", c.Forward.AllowRecursion,
			"cache-size", c.Forward.CacheSize, "stub-domain", c.Forward.StubDomains),
	}
	if c.Embedded() {
		return slog.GroupValue(append(attrs, slog.String("etcd", "embedded"),
			slog.String("etcd-data-dir", c.EtcdDataDir), slog.String("embedded-etcd-addr", c.EmbeddedEtcdAddr))...)
	}
	return slog.GroupValue(append(attrs, slog.Any("etcd-endpoints", c.Etcd.Endpoints),
		slog.Bool("etcd-tls", c.Etcd.CAFile != "" || c.Etcd.CertFile != ""),
		slog.String("etcd-username", c.Etcd.Username), slog.Bool("etcd-password-set", c.Etcd.Password != ""),
		slog.Duration("etcd-probe-interval", c.EtcdProbeInterval), slog.Duration("etcd-stall-after", c.EtcdStallAfter),
		slog.Duration("etcd-relist-jitter", c.EtcdRelistJitter))...)
}

// watchTiming is the mirror's pacing from the flags.
func (c Config) watchTiming() WatchTiming {
	jitter := c.EtcdRelistJitter
	if jitter == 0 {
		jitter = -1 // the ListWatcher's "at once"
	}
	return WatchTiming{RequestTimeout: c.Etcd.RequestTimeout, ProbeInterval: c.EtcdProbeInterval, StallAfter: c.EtcdStallAfter, RelistJitter: jitter}
}

// nsAddrs are the addresses ns.dns.<zone> answers: --ns-addrs, or when
// none are given and --dns-addr is one specific IP (a lone skydns run by
// hand, the demo), that IP, so the zone's own NS is never lame.
func (c Config) nsAddrs() []netip.Addr {
	out := make([]netip.Addr, 0, len(c.NSAddrs))
	for _, ip := range c.NSAddrs {
		if addr, ok := netip.AddrFromSlice(ip); ok {
			out = append(out, addr.Unmap())
		}
	}
	if len(out) > 0 {
		return out
	}
	if ap, err := netip.ParseAddrPort(c.DNSAddr); err == nil && !ap.Addr().IsUnspecified() {
		out = append(out, ap.Addr().Unmap())
	}
	return out
}

// resolverConfig is what the resolver takes from c.
func (c Config) resolverConfig() resolver.Config {
	nsAddrs := c.nsAddrs()
	hostname, _ := os.Hostname() // a pod's name in a cluster; "" leaves hostname.bind. REFUSED
	return resolver.Config{Zones: c.Zones, Prefix: c.Prefix, TTL: c.TTL, Priority: &c.Priority, MaxTTL: uint32(c.MaxTTL), Pods: resolver.PodMode(c.PodRecords), PodNamespaces: c.PodNamespaces, NSAddrs: nsAddrs,
		Version: "kubesky skydns " + version.Version, Hostname: hostname}
}
