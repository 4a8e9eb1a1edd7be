package skydns

import (
	"crypto/tls"
	"errors"

	"github.com/spf13/pflag"

	"github.com/kubesky/kubesky/skydns/certfile"
	"github.com/kubesky/kubesky/skydns/dnsserver"
)

// TLSConfig holds the DNS-over-TLS serving flags (docs/skydns.md, "DNS
// over TLS").
type TLSConfig struct {
	// Addr is the host:port DNS over TLS is served on; empty: not served.
	Addr string
	// CertFile and KeyFile are the PEM certificate chain and key, read
	// again when either file changes.
	CertFile, KeyFile string
}

// AddFlags registers the --tls-* flags.
func (c *TLSConfig) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.Addr, "tls-addr", c.Addr, "host:port to serve DNS over TLS on (RFC 7858; e.g. 0.0.0.0:853); empty: off")
	fs.StringVar(&c.CertFile, "tls-cert", c.CertFile, "PEM certificate (chain) for --tls-addr, read again when it changes")
	fs.StringVar(&c.KeyFile, "tls-key", c.KeyFile, "PEM private key of --tls-cert, read again when it changes")
}

// validate checks the flags and that the certificate and key load.
func (c TLSConfig) validate() error {
	if c.Addr == "" {
		if c.CertFile != "" || c.KeyFile != "" {
			return errors.New("--tls-cert and --tls-key need --tls-addr")
		}
		return nil
	}
	if err := checkListenAddr("--tls-addr", c.Addr); err != nil {
		return err
	}
	switch {
	case c.CertFile == "":
		return errors.New("--tls-cert: needed with --tls-addr")
	case c.KeyFile == "":
		return errors.New("--tls-key: needed with --tls-addr")
	}
	_, err := certfile.Load(c.CertFile, c.KeyFile)
	return err
}

// tlsServing sets cfg to serve DNS over TLS on --tls-addr, with the
// certificate of --tls-cert and --tls-key, read again when they change.
func (d *Daemon) tlsServing(cfg *dnsserver.Config) error {
	if d.cfg.TLS.Addr == "" {
		return nil
	}
	pair, err := certfile.Load(d.cfg.TLS.CertFile, d.cfg.TLS.KeyFile)
	if err != nil {
		return err
	}
	cfg.TLSAddr, cfg.TLS = d.cfg.TLS.Addr, &tls.Config{GetCertificate: pair.GetCertificate}
	return nil
}

// TLSAddr is the host:port DNS over TLS is served on; "" when it is not.
func (d *Daemon) TLSAddr() string { return d.dns.TLSAddr() }
