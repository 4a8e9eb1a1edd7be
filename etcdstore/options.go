package etcdstore

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	grpcbackoff "google.golang.org/grpc/backoff"
)

// ClientOptions are the settings for reaching an etcd cluster, shared by
// kube2sky and skydns.
type ClientOptions struct {
	Endpoints      []string
	DialTimeout    time.Duration
	RequestTimeout time.Duration
	CAFile         string
	CertFile       string
	KeyFile        string
	Username       string
	Password       string
}

// DefaultClientOptions returns options with no endpoints and the default
// timeouts.
func DefaultClientOptions() ClientOptions {
	return ClientOptions{DialTimeout: 5 * time.Second, RequestTimeout: 5 * time.Second}
}

// AddFlags registers the --etcd-* flags on fs.
func (o *ClientOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.Endpoints, "etcd-endpoints", o.Endpoints, "etcd client URLs, comma separated (http://host:2379 or https://...)")
	fs.DurationVar(&o.DialTimeout, "etcd-dial-timeout", o.DialTimeout, "timeout for establishing a connection to etcd")
	fs.DurationVar(&o.RequestTimeout, "etcd-request-timeout", o.RequestTimeout, "deadline for each etcd request")
	fs.StringVar(&o.CAFile, "etcd-cafile", o.CAFile, "CA bundle that verifies the etcd servers' certificates")
	fs.StringVar(&o.CertFile, "etcd-certfile", o.CertFile, "client certificate for etcd (with --etcd-keyfile)")
	fs.StringVar(&o.KeyFile, "etcd-keyfile", o.KeyFile, "client private key for etcd (with --etcd-certfile)")
	fs.StringVar(&o.Username, "etcd-username", o.Username, "etcd user name (with --etcd-password)")
	fs.StringVar(&o.Password, "etcd-password", o.Password, "etcd password")
}

// Validate checks the options; each error names the flag at fault.
func (o ClientOptions) Validate() error {
	var errs []error
	for _, e := range o.Endpoints {
		if err := validateEndpoint(e); err != nil {
			errs = append(errs, fmt.Errorf("--etcd-endpoints: %w", err))
		}
	}
	if o.DialTimeout <= 0 {
		errs = append(errs, fmt.Errorf("--etcd-dial-timeout: must be positive, got %s", o.DialTimeout))
	}
	if o.RequestTimeout <= 0 {
		errs = append(errs, fmt.Errorf("--etcd-request-timeout: must be positive, got %s", o.RequestTimeout))
	}
	if (o.CertFile == "") != (o.KeyFile == "") {
		errs = append(errs, errors.New("--etcd-certfile and --etcd-keyfile must be given together"))
	}
	if o.Password != "" && o.Username == "" {
		errs = append(errs, errors.New("--etcd-password needs --etcd-username"))
	}
	errs = append(errs, o.checkTLSFiles()...)
	return errors.Join(errs...)
}

// checkTLSFiles fails on a TLS file that is missing, unreadable or not
// what its flag says: a CA file without a PEM certificate, a certificate
// and key that do not parse or do not match.
func (o ClientOptions) checkTLSFiles() []error {
	errs := []error{checkReadable("--etcd-cafile", o.CAFile), checkReadable("--etcd-certfile", o.CertFile), checkReadable("--etcd-keyfile", o.KeyFile)}
	if errors.Join(errs...) != nil {
		return errs
	}
	if err := checkPEMCertificates(o.CAFile); err != nil {
		errs = append(errs, fmt.Errorf("--etcd-cafile: %w", err))
	}
	if o.CertFile != "" && o.KeyFile != "" {
		pair, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			errs = append(errs, fmt.Errorf("--etcd-certfile %s and --etcd-keyfile %s: %w", o.CertFile, o.KeyFile, err))
		} else if err := CheckValidity(pair.Leaf, time.Now()); err != nil {
			errs = append(errs, fmt.Errorf("--etcd-certfile %s: %w", o.CertFile, err))
		}
	}
	return errs
}

// CheckValidity fails for a certificate that has expired or is not valid
// yet at now, saying when it was valid.
func CheckValidity(cert *x509.Certificate, now time.Time) error {
	switch {
	case now.After(cert.NotAfter):
		return fmt.Errorf("certificate %q expired at %s", cert.Subject.CommonName, cert.NotAfter.UTC().Format(time.RFC3339))
	case now.Before(cert.NotBefore):
		return fmt.Errorf("certificate %q is not valid before %s", cert.Subject.CommonName, cert.NotBefore.UTC().Format(time.RFC3339))
	}
	return nil
}

func validateEndpoint(endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("endpoint %q is not an http:// or https:// URL with a host", endpoint)
	}
	return nil
}

func checkReadable(flag, path string) error {
	if path == "" {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	return f.Close()
}

// Config returns the clientv3 configuration for these options.
func (o ClientOptions) Config(logger *zap.Logger) (clientv3.Config, error) {
	tlsConfig, err := o.tlsConfig()
	if err != nil {
		return clientv3.Config{}, err
	}
	if logger == nil {
		logger = zap.NewNop()
	}
	return clientv3.Config{
		Endpoints:   o.Endpoints,
		DialTimeout: o.DialTimeout,
		TLS:         tlsConfig,
		Username:    o.Username,
		Password:    o.Password,
		Logger:      logger,
		// Keepalive detects a dead connection well before the next request.
		DialKeepAliveTime:    10 * time.Second,
		DialKeepAliveTimeout: o.DialTimeout,
		// gRPC's default reconnect backoff grows to two minutes; an etcd that
		// comes back should be seen within seconds.
		DialOptions: []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           grpcbackoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 2 * time.Second},
			MinConnectTimeout: o.DialTimeout,
		})},
	}, nil
}

func (o ClientOptions) tlsConfig() (*tls.Config, error) {
	usesTLS := o.CAFile != "" || o.CertFile != ""
	for _, e := range o.Endpoints {
		usesTLS = usesTLS || strings.HasPrefix(e, "https://")
	}
	if !usesTLS {
		return nil, nil
	}
	if err := checkPEMCertificates(o.CAFile); err != nil {
		return nil, fmt.Errorf("etcd TLS: --etcd-cafile: %w", err)
	}
	info := transport.TLSInfo{TrustedCAFile: o.CAFile, CertFile: o.CertFile, KeyFile: o.KeyFile}
	cfg, err := info.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("etcd TLS: %w", err)
	}
	return cfg, nil
}

// New connects a client with these options.
func (o ClientOptions) New(logger *zap.Logger) (*clientv3.Client, error) {
	cfg, err := o.Config(logger)
	if err != nil {
		return nil, err
	}
	c, err := clientv3.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("etcd client for %v: %w", o.Endpoints, err)
	}
	if cfg.TLS != nil {
		if err := o.checkHandshake(cfg.TLS); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// handshakeWait is how long checkHandshake waits, after the handshake, for
// etcd to reject the client certificate (under TLS 1.3 it does so after).
const handshakeWait = 300 * time.Millisecond

// checkHandshake makes one TLS connection to the first endpoint, so that a
// client certificate etcd rejects, or an etcd certificate the CA does not
// verify, is an error at start rather than a gRPC client retrying for
// ever in silence. An etcd that does not answer at all is not an error
// here: the daemons start and wait for it.
func (o ClientOptions) checkHandshake(tlsConfig *tls.Config) error {
	u, err := url.Parse(o.Endpoints[0])
	if err != nil || u.Scheme != "https" {
		return nil
	}
	cfg := tlsConfig.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName = u.Hostname()
	}
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: o.DialTimeout}, "tcp", u.Host, cfg)
	if err == nil {
		defer conn.Close()
		_ = conn.SetReadDeadline(time.Now().Add(handshakeWait))
		_, err = conn.Read(make([]byte, 1))
	}
	if err != nil && isTLSFailure(err) {
		return fmt.Errorf("etcd at %s refused the TLS handshake; check --etcd-cafile, --etcd-certfile and --etcd-keyfile: %w", o.Endpoints[0], err)
	}
	return nil
}

// isTLSFailure reports whether err is a TLS handshake or certificate
// failure rather than a network one.
func isTLSFailure(err error) bool {
	var verify *tls.CertificateVerificationError
	var alert tls.AlertError
	return errors.As(err, &verify) || errors.As(err, &alert) || strings.Contains(err.Error(), "tls: ")
}

// checkPEMCertificates fails unless path (if set) holds at least one PEM
// certificate; etcd's transport would silently trust nothing instead.
func checkPEMCertificates(path string) error {
	if path == "" {
		return nil
	}
	pemBytes, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if !x509.NewCertPool().AppendCertsFromPEM(pemBytes) {
		return fmt.Errorf("%s holds no PEM certificate", path)
	}
	return nil
}
