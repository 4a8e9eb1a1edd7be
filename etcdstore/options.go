package etcdstore

import (
	"cmp"
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

	// flagPrefix comes before "etcd-" in every flag's name: "" for
	// --etcd-*, "clusterset-" for --clusterset-etcd-* (see Prefixed).
	flagPrefix string
	// about names this etcd in the flags' help; "" means "etcd".
	about string
}

// DefaultClientOptions returns options with no endpoints and the default
// timeouts.
func DefaultClientOptions() ClientOptions {
	return ClientOptions{DialTimeout: 5 * time.Second, RequestTimeout: 5 * time.Second}
}

// Prefixed returns o for a second etcd whose flags are named
// --<prefix>etcd-* (prefix "clusterset-": --clusterset-etcd-endpoints);
// about names that etcd in the flags' help. Validate's errors name the
// prefixed flags.
func (o ClientOptions) Prefixed(prefix, about string) ClientOptions {
	o.flagPrefix, o.about = prefix, about
	return o
}

// Flag is the command-line name of one of these options' flags: "--" and
// the prefix, then "etcd-" and name ("endpoints", "cafile", ...).
func (o ClientOptions) Flag(name string) string { return "--" + o.flagName(name) }

func (o ClientOptions) flagName(name string) string { return o.flagPrefix + "etcd-" + name }

// AddFlags registers the --etcd-* flags on fs (named with the prefix of
// Prefixed, if any).
func (o *ClientOptions) AddFlags(fs *pflag.FlagSet) {
	etcd, n := cmp.Or(o.about, "etcd"), o.flagName
	fs.StringSliceVar(&o.Endpoints, n("endpoints"), o.Endpoints, etcd+": client URLs, comma separated (http://host:2379 or https://...)")
	fs.DurationVar(&o.DialTimeout, n("dial-timeout"), o.DialTimeout, etcd+": timeout for establishing a connection")
	fs.DurationVar(&o.RequestTimeout, n("request-timeout"), o.RequestTimeout, etcd+": deadline for each request")
	fs.StringVar(&o.CAFile, n("cafile"), o.CAFile, etcd+": CA bundle that verifies the servers' certificates")
	fs.StringVar(&o.CertFile, n("certfile"), o.CertFile, etcd+": client certificate (with "+o.Flag("keyfile")+")")
	fs.StringVar(&o.KeyFile, n("keyfile"), o.KeyFile, etcd+": client private key (with "+o.Flag("certfile")+")")
	fs.StringVar(&o.Username, n("username"), o.Username, etcd+": user name (with "+o.Flag("password")+")")
	fs.StringVar(&o.Password, n("password"), o.Password, etcd+": password")
}

// Given lists the flags whose values differ from DefaultClientOptions',
// for a caller to refuse options given where they mean nothing.
func (o ClientOptions) Given() []string {
	def := DefaultClientOptions()
	set := []struct {
		name  string
		given bool
	}{
		{"endpoints", len(o.Endpoints) > 0}, {"dial-timeout", o.DialTimeout != def.DialTimeout},
		{"request-timeout", o.RequestTimeout != def.RequestTimeout}, {"cafile", o.CAFile != ""},
		{"certfile", o.CertFile != ""}, {"keyfile", o.KeyFile != ""}, {"username", o.Username != ""}, {"password", o.Password != ""},
	}
	var given []string
	for _, s := range set {
		if s.given {
			given = append(given, o.Flag(s.name))
		}
	}
	return given
}

// Validate checks the options; each error names the flag at fault.
func (o ClientOptions) Validate() error {
	var errs []error
	for _, e := range o.Endpoints {
		if err := validateEndpoint(e); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", o.Flag("endpoints"), err))
		}
	}
	if o.DialTimeout <= 0 {
		errs = append(errs, fmt.Errorf("%s: must be positive, got %s", o.Flag("dial-timeout"), o.DialTimeout))
	}
	if o.RequestTimeout <= 0 {
		errs = append(errs, fmt.Errorf("%s: must be positive, got %s", o.Flag("request-timeout"), o.RequestTimeout))
	}
	if (o.CertFile == "") != (o.KeyFile == "") {
		errs = append(errs, fmt.Errorf("%s and %s must be given together", o.Flag("certfile"), o.Flag("keyfile")))
	}
	if o.Password != "" && o.Username == "" {
		errs = append(errs, fmt.Errorf("%s needs %s", o.Flag("password"), o.Flag("username")))
	}
	errs = append(errs, o.checkTLSFiles()...)
	return errors.Join(errs...)
}

// ValidateOptional validates the options of a second etcd that replaces
// another when its endpoints are given, and only when the feature it
// serves is on (wanted, turned on by the flag on). Flags given while the
// feature is off, or without endpoints, are errors naming them.
func (o ClientOptions) ValidateOptional(wanted bool, on string) error {
	given := o.Given()
	needs := on
	switch {
	case wanted && len(o.Endpoints) > 0:
		return o.Validate()
	case wanted:
		needs = o.Flag("endpoints")
	}
	var errs []error
	for _, flag := range given {
		errs = append(errs, fmt.Errorf("%s: only with %s", flag, needs))
	}
	return errors.Join(errs...)
}

// checkTLSFiles fails on a TLS file that is missing, unreadable or not
// what its flag says: a CA file without a PEM certificate, a certificate
// and key that do not parse or do not match.
func (o ClientOptions) checkTLSFiles() []error {
	errs := []error{checkReadable(o.Flag("cafile"), o.CAFile), checkReadable(o.Flag("certfile"), o.CertFile), checkReadable(o.Flag("keyfile"), o.KeyFile)}
	if errors.Join(errs...) != nil {
		return errs
	}
	if err := checkPEMCertificates(o.CAFile); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", o.Flag("cafile"), err))
	}
	if o.CertFile != "" && o.KeyFile != "" {
		pair, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %s and %s %s: %w", o.Flag("certfile"), o.CertFile, o.Flag("keyfile"), o.KeyFile, err))
		} else if err := CheckValidity(pair.Leaf, time.Now()); err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", o.Flag("certfile"), o.CertFile, err))
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
		return nil, fmt.Errorf("etcd TLS: %s: %w", o.Flag("cafile"), err)
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
		return fmt.Errorf("etcd at %s refused the TLS handshake; check %s, %s and %s: %w", o.Endpoints[0], o.Flag("cafile"), o.Flag("certfile"), o.Flag("keyfile"), err)
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
