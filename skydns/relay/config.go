package relay

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubesky/kubesky/etcdstore"
)

// Config is the relay's: where it serves readers (TLS with client
// certificates required), whom it lets in, and how it reaches etcd.
type Config struct {
	ListenAddr    string        // gRPC, etcd's KV (reads) and Watch
	HTTPAddr      string        // /healthz, /readyz, /metrics
	CertFile      string        // the serving certificate readers verify
	KeyFile       string        // its key
	TrustedCAFile string        // the CA a reader's client certificate must chain to
	AllowedCNs    []string      // the readers' common names
	Prefix        string        // what /readyz reads upstream
	WatchBatch    time.Duration // the window whose events go to a reader as one response (0: each revision alone)
	Etcd          etcdstore.ClientOptions
}

// DefaultConfig listens on etcd's and grpc-proxy's usual ports.
func DefaultConfig() Config {
	return Config{ListenAddr: "0.0.0.0:2379", HTTPAddr: "0.0.0.0:2381", Prefix: "/skydns/", WatchBatch: 250 * time.Millisecond, Etcd: etcdstore.DefaultClientOptions()}
}

// AddFlags registers the relay's flags, the --etcd-* ones (its own
// identity towards etcd) among them.
func (c *Config) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.ListenAddr, "listen-addr", c.ListenAddr, "host:port serving readers etcd's KV (reads only) and Watch over TLS")
	fs.StringVar(&c.HTTPAddr, "http-addr", c.HTTPAddr, "host:port of /healthz, /readyz and /metrics")
	fs.StringVar(&c.CertFile, "cert-file", c.CertFile, "the relay's serving certificate (PEM)")
	fs.StringVar(&c.KeyFile, "key-file", c.KeyFile, "the key of --cert-file")
	fs.StringVar(&c.TrustedCAFile, "trusted-ca-file", c.TrustedCAFile, "CA that signs the readers' client certificates")
	fs.StringSliceVar(&c.AllowedCNs, "allowed-cn", c.AllowedCNs, "common name of a reader's client certificate let in, repeatable")
	fs.StringVar(&c.Prefix, "prefix", c.Prefix, "key prefix /readyz reads upstream (the relay's user may read it)")
	fs.DurationVar(&c.WatchBatch, "watch-batch", c.WatchBatch, "send a reader the changes of this window as one watch response, marshalled once for all readers (0: each revision on its own, as etcd's grpc-proxy)")
	c.Etcd.AddFlags(fs)
}

// Validate checks the flags and the files they name; each error names
// its flag. The upstream credential is checked by etcdstore.
func (c Config) Validate() error {
	var errs []error
	if c.ListenAddr == "" || c.HTTPAddr == "" {
		errs = append(errs, errors.New("--listen-addr and --http-addr are required"))
	}
	if len(c.AllowedCNs) == 0 {
		errs = append(errs, errors.New("--allowed-cn: name at least one reader"))
	}
	if c.WatchBatch < 0 || c.WatchBatch > time.Second {
		errs = append(errs, fmt.Errorf("--watch-batch %s: want 0 to 1s", c.WatchBatch))
	}
	if len(c.Etcd.Endpoints) == 0 {
		errs = append(errs, errors.New("--etcd-endpoints is required"))
	}
	if _, err := ServerTLS(c); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(append(errs, c.Etcd.Validate())...)
}

// ServerTLS loads c's serving certificate and the readers' CA, and
// requires a client certificate the CA verifies.
func ServerTLS(c Config) (*tls.Config, error) {
	if c.CertFile == "" || c.KeyFile == "" || c.TrustedCAFile == "" {
		return nil, errors.New("--cert-file, --key-file and --trusted-ca-file are required")
	}
	pair, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("--cert-file %s and --key-file %s: %w", c.CertFile, c.KeyFile, err)
	}
	if err := etcdstore.CheckValidity(pair.Leaf, time.Now()); err != nil {
		return nil, fmt.Errorf("--cert-file %s: %w", c.CertFile, err)
	}
	pem, err := os.ReadFile(c.TrustedCAFile)
	if err != nil {
		return nil, fmt.Errorf("--trusted-ca-file: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--trusted-ca-file: %s holds no PEM certificate", c.TrustedCAFile)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{pair},
		ClientCAs:    roots,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		MinVersion:   tls.VersionTLS12,
	}, nil
}
