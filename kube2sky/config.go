package kube2sky

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubesky/kubesky/contract"
	cs "github.com/kubesky/kubesky/contract/clusterset"
	"github.com/kubesky/kubesky/etcdstore"
	"github.com/kubesky/kubesky/internal/flagenv"
	"github.com/kubesky/kubesky/internal/logging"
	"github.com/kubesky/kubesky/kube2sky/clusterset"
	"github.com/kubesky/kubesky/kube2sky/records"
	"github.com/kubesky/kubesky/kube2sky/registry/leader"
	"github.com/kubesky/kubesky/kube2sky/source"
)

// EnvPrefix is the prefix of the environment variables flags fall back to:
// --http-addr reads KUBE2SKY_HTTP_ADDR.
const EnvPrefix = "KUBE2SKY"

// Config is everything kube2sky can be told.
type Config struct {
	// Kubeconfig is the kubeconfig file; "" means $KUBECONFIG, then
	// ~/.kube/config, then the in-cluster configuration.
	Kubeconfig string
	Etcd       etcdstore.ClientOptions
	// Zone is the cluster domain, e.g. cluster.local.
	Zone string
	// Corefile, if set, is a CoreDNS Corefile whose kube2sky settings are
	// taken as flags (read once, at start).
	Corefile string
	// Prefix is the etcd key prefix of the records.
	Prefix string
	// HTTPAddr is where /healthz, /readyz and /metrics listen.
	HTTPAddr string
	// Workers is how many Services are reconciled at once.
	Workers int
	// ResyncPeriod is how often a full reconcile runs.
	ResyncPeriod time.Duration
	// LeaderElect makes replicas elect one writer in etcd.
	LeaderElect bool
	// LeaseDuration is the leader's etcd lease TTL: how long a crashed
	// leader blocks the others.
	LeaseDuration time.Duration
	// TTL is the DNS TTL of every record, in seconds.
	TTL uint32
	// OwnerID is stamped on every value; "" means "kube2sky.<zone>".
	OwnerID string
	// MaxTxnOps is the most operations in one etcd Txn; it must not exceed
	// the etcd server's --max-txn-ops.
	MaxTxnOps int
	// LogLevel is debug, info, warn or error.
	LogLevel string
	// LogFormat is text (logfmt) or json, for every line, client-go's too.
	LogFormat string
	// Pprof mounts net/http/pprof under /debug/pprof/ on HTTPAddr.
	Pprof bool
	// GCPercent is the Go collector's target (as GOGC) that Run sets: the
	// heap may grow to 1+GCPercent/100 times what is live before a
	// collection; -1 leaves GOGC's setting.
	GCPercent int
	// Identity names this replica in the election; "" means host name and
	// process id.
	Identity string
	// ExtraRecords are the pod and host records (extraconfig.go).
	ExtraRecords
	// Clusterset publishes the ServiceExports (kube2sky/clusterset) when
	// its Prefix is set.
	Clusterset clusterset.Config
	// ClustersetEtcd reaches the etcd the clusterset is published in (the
	// --clusterset-etcd-* flags); no endpoints means Etcd's.
	ClustersetEtcd etcdstore.ClientOptions

	// probeInterval is how often etcd's reachability is checked (2s).
	probeInterval time.Duration
	// serviceChunk is how many Services a chunk of a full reconcile's
	// Service pass holds (fullservices.go).
	serviceChunk int
}

// DefaultConfig returns the defaults of every flag.
func DefaultConfig() Config {
	etcd := etcdstore.DefaultClientOptions()
	etcd.Endpoints = []string{"http://127.0.0.1:2379"}
	return Config{
		Etcd:          etcd,
		Zone:          "cluster.local",
		Prefix:        contract.DefaultPrefix,
		HTTPAddr:      ":8081",
		Workers:       4,
		ResyncPeriod:  5 * time.Minute,
		LeaderElect:   true,
		LeaseDuration: 15 * time.Second,
		TTL:           30,
		MaxTxnOps:     128,
		LogLevel:      "info",
		LogFormat:     logging.FormatText,
		GCPercent:     DefaultGCPercent,
		probeInterval: 2 * time.Second,
		serviceChunk:  serviceChunk,
		ExtraRecords:  ExtraRecords{PodRecords: PodsDisabled, DNSService: "kube-system/kube-dns"},
		Clusterset:    clusterset.Config{LeaseTTL: 12 * time.Second, ResyncPeriod: time.Minute},
		ClustersetEtcd: etcdstore.DefaultClientOptions().Prefixed("clusterset-",
			"the clusterset's etcd, if not the records'"),
	}
}

// AddFlags registers every flag on fs, with the current values as defaults.
func (c *Config) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.Kubeconfig, "kubeconfig", c.Kubeconfig, "kubeconfig file (default $KUBECONFIG, then ~/.kube/config, then in-cluster)")
	c.Etcd.AddFlags(fs)
	fs.StringVar(&c.Zone, "zone", c.Zone, "cluster domain the records are written for")
	fs.StringVar(&c.Corefile, "corefile", c.Corefile, "a CoreDNS Corefile whose kube2sky settings (the kubernetes plugin's pods, ttl, namespaces, endpoint_pod_names, ignore empty_service; the hosts entries' domain) are taken as flags, at start; a flag also given must agree")
	fs.StringVar(&c.Prefix, "prefix", c.Prefix, "etcd key prefix of the records")
	fs.StringVar(&c.Clusterset.Prefix, "clusterset-prefix", c.Clusterset.Prefix, "etcd key prefix of the Multi-Cluster Services records (e.g. /clusterset): publish this cluster's ServiceExports there (empty: none)")
	fs.StringVar(&c.Clusterset.ClusterID, "cluster-id", c.Clusterset.ClusterID, "this cluster's ID in the clusterset, a DNS label (empty: the ClusterProperty cluster.clusterset.k8s.io)")
	fs.DurationVar(&c.Clusterset.LeaseTTL, "clusterset-lease-ttl", c.Clusterset.LeaseTTL, "TTL of the lease the exports are written on: how long they outlive a stopped kube2sky")
	fs.DurationVar(&c.Clusterset.ResyncPeriod, "clusterset-resync-period", c.Clusterset.ResyncPeriod, "how often every ServiceExport's Conflict condition is checked against the other clusters' exports")
	c.ClustersetEtcd.AddFlags(fs)
	fs.StringVar(&c.HTTPAddr, "http-addr", c.HTTPAddr, "listen address of /healthz, /readyz and /metrics")
	fs.IntVar(&c.Workers, "workers", c.Workers, "Services reconciled concurrently")
	fs.DurationVar(&c.ResyncPeriod, "resync-period", c.ResyncPeriod, "interval of the full reconcile that repairs and garbage-collects etcd")
	fs.BoolVar(&c.LeaderElect, "leader-elect", c.LeaderElect, "elect one writing replica through etcd")
	fs.DurationVar(&c.LeaseDuration, "leader-elect-lease-duration", c.LeaseDuration, "leader lease TTL (whole seconds, at least 2s): how long a crashed leader blocks the others")
	fs.Uint32Var(&c.TTL, "ttl", c.TTL, "DNS TTL of every record, in seconds")
	fs.StringVar(&c.OwnerID, "owner-id", c.OwnerID, `owner stamped on every value; only keys with it are changed or deleted (default "kube2sky.<zone>")`)
	fs.IntVar(&c.MaxTxnOps, "max-txn-ops", c.MaxTxnOps, "most operations per etcd transaction (at most the server's --max-txn-ops)")
	fs.StringVar(&c.LogLevel, "log-level", c.LogLevel, "log level: debug, info, warn or error")
	fs.StringVar(&c.LogFormat, "log-format", c.LogFormat, "log line format, client-go's lines included: text (key=value) or json")
	fs.BoolVar(&c.Pprof, "pprof", c.Pprof, "serve net/http/pprof under /debug/pprof/ on --http-addr")
	fs.IntVar(&c.GCPercent, "gc-percent", c.GCPercent, "Go GC target, as GOGC: the heap may grow to 1+N/100 times its live size before a collection (-1: keep GOGC's setting)")
	c.ExtraRecords.addFlags(fs)
}

// Parse parses args into fs (on which AddFlags was called), fills the
// flags not given from the environment (KUBE2SKY_<FLAG>, and ETCD_<FLAG>
// or CLUSTERSET_ETCD_<FLAG> for the --etcd-* and --clusterset-etcd-*
// flags), and validates the result.
func (c *Config) Parse(fs *pflag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (every setting is a --flag)", fs.Arg(0))
	}
	if err := flagenv.Apply(fs, EnvPrefix); err != nil {
		return err
	}
	if err := c.applyCorefile(fs); err != nil {
		return err
	}
	return c.Validate()
}

// Validate checks the configuration; each error names the flag at fault.
func (c Config) Validate() error {
	errs := []error{c.Etcd.Validate()}
	if len(c.Etcd.Endpoints) == 0 {
		errs = append(errs, errors.New("--etcd-endpoints: at least one endpoint is required"))
	}
	if !contract.ValidDomain(c.Zone) {
		errs = append(errs, fmt.Errorf("--zone: %q is not a lower-case domain name", c.Zone))
	}
	errs = append(errs, validatePrefix(c.Prefix), validateHTTPAddr(c.HTTPAddr), c.validateNumbers(), validateOwner(c.OwnerID))
	errs = append(errs, c.ExtraRecords.validate(c.Zone))
	if c.Clusterset.Prefix != "" {
		errs = append(errs, c.Clusterset.Validate(), separatePrefixes(c.Prefix, c.Clusterset.Prefix))
	}
	errs = append(errs, c.ClustersetEtcd.ValidateOptional(c.Clusterset.Prefix != "", "--clusterset-prefix"))
	if _, err := parseLogLevel(c.LogLevel); err != nil {
		errs = append(errs, err)
	}
	if err := logging.CheckFormat(c.LogFormat); err != nil {
		errs = append(errs, fmt.Errorf("--log-format: %w", err))
	}
	return errors.Join(errs...)
}

// separatePrefixes refuses a clusterset prefix that overlaps the records'.
func separatePrefixes(records, clusterset string) error {
	if cs.Overlaps(clusterset, records) {
		return fmt.Errorf("--clusterset-prefix: %q overlaps --prefix %q", clusterset, records)
	}
	return nil
}

func (c Config) validateNumbers() error {
	var errs []error
	if c.Workers < 1 {
		errs = append(errs, fmt.Errorf("--workers: must be at least 1, got %d", c.Workers))
	}
	if c.ResyncPeriod <= 0 {
		errs = append(errs, fmt.Errorf("--resync-period: must be positive, got %s", c.ResyncPeriod))
	}
	if c.LeaseDuration < 2*time.Second || c.LeaseDuration%time.Second != 0 {
		errs = append(errs, fmt.Errorf("--leader-elect-lease-duration: must be whole seconds, at least 2s, got %s", c.LeaseDuration))
	}
	if c.MaxTxnOps < 2 {
		errs = append(errs, fmt.Errorf("--max-txn-ops: must be at least 2, got %d", c.MaxTxnOps))
	}
	if c.GCPercent < -1 {
		errs = append(errs, fmt.Errorf("--gc-percent: want -1 (keep GOGC's setting) or more, got %d", c.GCPercent))
	}
	return errors.Join(errs...)
}

func validatePrefix(p string) error {
	if !strings.HasPrefix(p, "/") || len(p) < 2 || strings.HasSuffix(p, "/") || strings.Contains(p, "//") {
		return fmt.Errorf("--prefix: %q must start with / and have no empty or trailing segment, like /skydns", p)
	}
	return nil
}

func validateHTTPAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err == nil {
		_, err = strconv.ParseUint(port, 10, 16)
	}
	if err != nil {
		return fmt.Errorf("--http-addr: %q is not host:port", addr)
	}
	return nil
}

func validateOwner(owner string) error {
	if strings.ContainsAny(owner, "/ \t\n\"\\") || len(owner) > 253 {
		return fmt.Errorf("--owner-id: %q must be at most 253 characters without slashes, quotes or spaces", owner)
	}
	return nil
}

// owner returns the owner id, derived from the zone when not set.
func (c Config) owner() string {
	if c.OwnerID != "" {
		return c.OwnerID
	}
	return "kube2sky." + strings.TrimSuffix(c.Zone, ".")
}

// zone returns the records zone of this configuration.
func (c Config) zone() records.Zone {
	z := records.NewZone(c.Zone, c.Prefix, c.TTL, c.owner())
	if c.EndpointPodNames {
		z = z.WithEndpointPodNames()
	}
	if c.IgnoreEmptyServices {
		z = z.WithEmptyServicesIgnored()
	}
	if len(c.Namespaces) > 0 {
		z = z.WithNamespaces(c.Namespaces)
	}
	return z
}

// electionPrefix returns the key prefix replicas campaign under.
func (c Config) electionPrefix() string {
	return c.Prefix + "/_kube2sky/leader/" + c.owner()
}

// identity returns the name this replica campaigns with.
func (c Config) identity() string {
	if c.Identity != "" {
		return c.Identity
	}
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	return fmt.Sprintf("%s/%d", host, os.Getpid())
}

// sourceConfig returns what the cluster's side is told.
func (c Config) sourceConfig() source.Config {
	return source.Config{Zone: c.zone(), Prefix: c.Prefix, TTL: c.TTL, Owner: c.owner(), VerifiedPods: c.PodRecords == PodsVerified,
		HostsConfigMap: c.HostsConfigMap, HostsDomain: c.HostsDomain, KubeDNSConfigMap: c.KubeDNSConfigMap, DNSService: c.DNSService}
}

// clustersetConfig is what the publisher is told, its request timeout
// that of the etcd it publishes in.
func (c Config) clustersetConfig() clusterset.Config {
	cfg := c.Clusterset
	cfg.RequestTimeout = c.Etcd.RequestTimeout
	if len(c.ClustersetEtcd.Endpoints) > 0 {
		cfg.RequestTimeout = c.ClustersetEtcd.RequestTimeout
	}
	return cfg
}

// leaderConfig returns what this replica campaigns with.
func (c Config) leaderConfig() leader.Config {
	return leader.Config{Prefix: c.electionPrefix(), Identity: c.identity(), Owner: c.owner(), LeaseDuration: c.LeaseDuration,
		RequestTimeout: c.Etcd.RequestTimeout, CheckInterval: c.probeInterval}
}
