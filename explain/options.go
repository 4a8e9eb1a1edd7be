package explain

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/etcdstore"
	"github.com/kubesky/kubesky/internal/flagenv"
	"github.com/kubesky/kubesky/kube2sky/records"
)

// EnvPrefix is the prefix of the environment variables flags fall back to:
// --kubeconfig reads KUBESKY_KUBECONFIG (--etcd-* also ETCD_*).
const EnvPrefix = "KUBESKY"

// Options are the flags of `kubesky explain`.
type Options struct {
	Etcd etcdstore.ClientOptions
	// Kubeconfig, when set, is used to fetch the objects and, without
	// DNS, to find the replicas.
	Kubeconfig string
	// DNS are the replicas, "DNSADDR[,http=HTTPADDR]" each.
	DNS []string
	// DNSService is the Service whose endpoints are the replicas,
	// "namespace/name".
	DNSService string
	// Zone, Prefix, TTL and OwnerID are kube2sky's, for its records.
	Zone    string
	Prefix  string
	TTL     uint32
	OwnerID string
	MaxKeys int64
	Timeout time.Duration
	// TCP asks the replicas over TCP only.
	TCP bool
}

// DefaultOptions are kube2sky's defaults and the kube-dns Service.
func DefaultOptions() Options {
	return Options{Etcd: etcdstore.DefaultClientOptions(), DNSService: "kube-system/kube-dns",
		Zone: "cluster.local", Prefix: contract.DefaultPrefix, TTL: 30, MaxKeys: 100, Timeout: 5 * time.Second}
}

// AddFlags registers the options on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.Etcd.AddFlags(fs)
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "kubeconfig file: fetch the objects the keys stand for and, without --dns, find the replicas")
	fs.StringArrayVar(&o.DNS, "dns", o.DNS, "a skydns replica, DNSADDR[,http=HTTPADDR] (HTTP for its applied revision); repeat for each")
	fs.StringVar(&o.DNSService, "dns-service", o.DNSService, "namespace/name of the DNS Service whose endpoints are the replicas (with --kubeconfig, without --dns)")
	fs.StringVar(&o.Zone, "zone", o.Zone, "cluster domain, as given to kube2sky")
	fs.StringVar(&o.Prefix, "prefix", o.Prefix, "etcd key prefix, as given to kube2sky")
	fs.Uint32Var(&o.TTL, "ttl", o.TTL, "record TTL, as given to kube2sky")
	fs.StringVar(&o.OwnerID, "owner-id", o.OwnerID, `kube2sky's owner id (default "kube2sky.<zone>")`)
	fs.Int64Var(&o.MaxKeys, "max-keys", o.MaxKeys, "most keys shown below the name")
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "deadline of each request (etcd, API, DNS, HTTP)")
	fs.BoolVar(&o.TCP, "tcp", o.TCP, "ask the replicas over TCP only (kubectl port-forward carries no UDP)")
}

// Parse parses args into fs (on which AddFlags was called), fills the flags
// not given from the environment, validates, and returns the positional
// arguments (NAME [TYPE]).
func (o *Options) Parse(fs *pflag.FlagSet, args []string) ([]string, error) {
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if err := flagenv.Apply(fs, EnvPrefix); err != nil {
		return nil, err
	}
	return fs.Args(), o.Validate()
}

// Validate checks the options; each error names its flag.
func (o Options) Validate() error {
	errs := []error{o.Etcd.Validate()}
	if len(o.Etcd.Endpoints) == 0 {
		errs = append(errs, errors.New("--etcd-endpoints: required (the etcd kube2sky writes to)"))
	}
	for _, d := range o.DNS {
		if _, err := ParseReplica(d); err != nil {
			errs = append(errs, err)
		}
	}
	if ns, name, ok := strings.Cut(o.DNSService, "/"); !ok || !contract.ValidLabel(ns) || !contract.ValidLabel(name) {
		errs = append(errs, fmt.Errorf("--dns-service: %q is not namespace/name", o.DNSService))
	}
	if !contract.ValidDomain(strings.ToLower(o.Zone)) {
		errs = append(errs, fmt.Errorf("--zone: %q is not a domain name", o.Zone))
	}
	if o.MaxKeys < 1 || o.Timeout <= 0 {
		errs = append(errs, errors.New("--max-keys and --timeout must be positive"))
	}
	return errors.Join(errs...)
}

// zone is kube2sky's records zone under these options.
func (o Options) zone() records.Zone {
	owner := o.OwnerID
	if owner == "" {
		owner = "kube2sky." + strings.TrimSuffix(strings.ToLower(o.Zone), ".")
	}
	return records.NewZone(o.Zone, o.Prefix, o.TTL, owner)
}

// Sources connects to what the options name. release closes the etcd
// client.
func (o Options) Sources(ctx context.Context) (src Sources, release func(), err error) {
	src = Sources{Zone: o.zone(), MaxKeys: o.MaxKeys, Timeout: o.Timeout, TCP: o.TCP}
	for _, d := range o.DNS {
		r, _ := ParseReplica(d) // validated
		src.Replicas = append(src.Replicas, r)
	}
	if o.Kubeconfig != "" {
		if src.Kube, err = kubeClient(o.Kubeconfig); err != nil {
			return Sources{}, nil, err
		}
		if len(src.Replicas) == 0 {
			if src.Replicas, err = o.discover(ctx, src.Kube); err != nil {
				return Sources{}, nil, err
			}
		}
	}
	client, err := o.Etcd.New(zap.NewNop())
	if err != nil {
		return Sources{}, nil, err
	}
	src.Etcd = client
	return src, func() { client.Close() }, nil
}

func (o Options) discover(ctx context.Context, kube kubernetes.Interface) ([]Replica, error) {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	ns, name, _ := strings.Cut(o.DNSService, "/")
	return DiscoverReplicas(ctx, kube, ns, name)
}

func kubeClient(path string) (kubernetes.Interface, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig: %w", err)
	}
	return kubernetes.NewForConfig(cfg)
}
