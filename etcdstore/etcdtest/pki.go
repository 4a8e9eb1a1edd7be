package etcdtest

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"path/filepath"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kubesky/kubesky/etcdstore"
	"github.com/kubesky/kubesky/internal/kubeproc"
)

// PKI is a throwaway CA for etcd, with a serving certificate for
// 127.0.0.1 and client certificates whose common name is the etcd user
// they authenticate as (etcd's --client-cert-auth).
type PKI struct {
	Dir    string
	CAFile string

	ca *kubeproc.CA
}

// Cert is a certificate and key file pair.
type Cert struct {
	CertFile, KeyFile string
}

// NewPKI writes a CA and a serving certificate for localhost and
// 127.0.0.1 (Server) into a temp dir.
func NewPKI(t testing.TB) *PKI {
	t.Helper()
	ca, err := kubeproc.NewCA(t.TempDir(), 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	p := &PKI{Dir: ca.Dir, CAFile: ca.CertFile, ca: ca}
	tmpl := kubeproc.CertTemplate("etcd", 24*time.Hour)
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	tmpl.DNSNames = []string{"localhost"}
	tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	p.Issue(t, "server", tmpl)
	return p
}

// Server is the serving certificate for localhost and 127.0.0.1.
func (p *PKI) Server() Cert {
	server := filepath.Join(p.Dir, "server")
	return Cert{CertFile: server + ".crt", KeyFile: server + ".key"}
}

// Client writes a client certificate for the etcd user cn.
func (p *PKI) Client(t testing.TB, cn string) Cert {
	t.Helper()
	return p.Issue(t, "client-"+cn, ClientTemplate(cn, 24*time.Hour))
}

// ClientTemplate is a client certificate for cn, valid for validity, to
// be changed (say, its NotAfter) and passed to Issue.
func ClientTemplate(cn string, validity time.Duration) *x509.Certificate {
	tmpl := kubeproc.CertTemplate(cn, validity)
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	return tmpl
}

// Issue signs tmpl and writes <Dir>/<name>.crt and .key.
func (p *PKI) Issue(t testing.TB, name string, tmpl *x509.Certificate) Cert {
	t.Helper()
	certFile, keyFile, err := p.ca.Issue(name, tmpl)
	if err != nil {
		t.Fatal(err)
	}
	return Cert{CertFile: certFile, KeyFile: keyFile}
}

// Flags are the kube2sky and skydns flags that present c to an etcd
// trusting p.
func (p *PKI) Flags(c Cert) []string { return p.PrefixedFlags("", c) }

// PrefixedFlags are Flags named --<prefix>etcd-* (see
// etcdstore.ClientOptions.Prefixed).
func (p *PKI) PrefixedFlags(prefix string, c Cert) []string {
	flag := "--" + prefix + "etcd-"
	return []string{flag + "cafile=" + p.CAFile, flag + "certfile=" + c.CertFile, flag + "keyfile=" + c.KeyFile}
}

// Options are the client options presenting c to the etcd at url.
func (p *PKI) Options(url string, c Cert) etcdstore.ClientOptions {
	opts := etcdstore.DefaultClientOptions()
	opts.Endpoints = []string{url}
	opts.CAFile, opts.CertFile, opts.KeyFile = p.CAFile, c.CertFile, c.KeyFile
	return opts
}

// TLSConfig is the client TLS configuration presenting c to an etcd
// trusting p.
func (p *PKI) TLSConfig(t testing.TB, c Cert) *tls.Config {
	t.Helper()
	info := transport.TLSInfo{TrustedCAFile: p.CAFile, CertFile: c.CertFile, KeyFile: c.KeyFile}
	cfg, err := info.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// StartSecure starts an etcd server, stopped when the test ends, that
// serves clients over TLS on 127.0.0.1 and requires a client certificate
// signed by pki's CA. Its Client presents admin's certificate: once auth
// is enabled, admin must be a user with the root role.
func StartSecure(t testing.TB, pki *PKI, admin string) *Server {
	t.Helper()
	return StartSecureWithProgressNotify(t, pki, admin, 0)
}

// StartSecureWithProgressNotify is StartSecure with etcd sending a
// progress notification to each quiet watch that asks for them every
// interval (0: etcd's default).
func StartSecureWithProgressNotify(t testing.TB, pki *PKI, admin string, interval time.Duration) *Server {
	t.Helper()
	server := pki.Server()
	s := &Server{DataDir: t.TempDir(), progressNotify: interval,
		clientTLS: &transport.TLSInfo{CertFile: server.CertFile, KeyFile: server.KeyFile, TrustedCAFile: pki.CAFile, ClientCertAuth: true}}
	s.start(t, "https://127.0.0.1:0")
	t.Cleanup(func() { s.Stop() })
	s.Client = NewClientWith(t, pki.Options(s.ClientURL(), pki.Client(t, admin)))
	return s
}

// NewClientWith returns a client with opts, closed when the test ends.
func NewClientWith(t testing.TB, opts etcdstore.ClientOptions) *clientv3.Client {
	t.Helper()
	c, err := opts.New(nil)
	if err != nil {
		t.Fatalf("etcd client for %v: %v", opts.Endpoints, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
