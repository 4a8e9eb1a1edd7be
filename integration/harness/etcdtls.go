package harness

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"

	"github.com/kubesky/kubesky/internal/kubeproc"
)

// EtcdPKI is a throwaway CA for etcd, with a serving certificate for
// 127.0.0.1 and client certificates whose common name is the etcd user
// they authenticate as (etcd's --client-cert-auth).
type EtcdPKI struct {
	Dir    string
	CAFile string

	ca *kubeproc.CA
}

// ClientCert is a certificate and key file pair.
type ClientCert struct {
	CertFile, KeyFile string
}

// NewEtcdPKI writes a CA and etcd's serving certificate into a temp dir.
func NewEtcdPKI(t testing.TB) *EtcdPKI {
	t.Helper()
	ca, err := kubeproc.NewCA(t.TempDir(), 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	p := &EtcdPKI{Dir: ca.Dir, CAFile: ca.CertFile, ca: ca}
	tmpl := kubeproc.CertTemplate("etcd", 24*time.Hour)
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	tmpl.DNSNames = []string{"localhost"}
	tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	p.write(t, "server", tmpl)
	return p
}

// Client writes a client certificate for the etcd user cn.
func (p *EtcdPKI) Client(t testing.TB, cn string) ClientCert {
	t.Helper()
	tmpl := kubeproc.CertTemplate(cn, 24*time.Hour)
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	return p.write(t, "client-"+cn, tmpl)
}

func (p *EtcdPKI) write(t testing.TB, name string, tmpl *x509.Certificate) ClientCert {
	t.Helper()
	certFile, keyFile, err := p.ca.Issue(name, tmpl)
	if err != nil {
		t.Fatal(err)
	}
	return ClientCert{CertFile: certFile, KeyFile: keyFile}
}

// Flags are the kube2sky and skydns flags that present c to an etcd
// trusting p.
func (p *EtcdPKI) Flags(c ClientCert) []string {
	return []string{"--etcd-cafile=" + p.CAFile, "--etcd-certfile=" + c.CertFile, "--etcd-keyfile=" + c.KeyFile}
}

// TLSConfig is the client TLS configuration presenting c to an etcd
// trusting p.
func (p *EtcdPKI) TLSConfig(t testing.TB, c ClientCert) *tls.Config {
	t.Helper()
	info := transport.TLSInfo{TrustedCAFile: p.CAFile, CertFile: c.CertFile, KeyFile: c.KeyFile}
	cfg, err := info.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// StartSecureEtcd runs bin/etcd serving clients over TLS on 127.0.0.1,
// requiring a client certificate signed by pki's CA. The harness talks to
// it (health, Client, Ctl) as admin, whose certificate it makes; once auth
// is enabled, admin must be an etcd user with the root role.
func StartSecureEtcd(t testing.TB, pki *EtcdPKI, admin string) *Etcd {
	t.Helper()
	cert := pki.Client(t, admin)
	tlsConfig := pki.TLSConfig(t, cert)
	server := filepath.Join(pki.Dir, "server")
	return startEtcd(t, "https", etcdAccess{
		tls:     tlsConfig,
		ctlArgs: []string{"--cacert=" + pki.CAFile, "--cert=" + cert.CertFile, "--key=" + cert.KeyFile},
	}, "--client-cert-auth", "--trusted-ca-file="+pki.CAFile,
		"--cert-file="+server+".crt", "--key-file="+server+".key")
}

// etcdAccess is how the harness reaches an etcd: plain, or over TLS with
// a client certificate.
type etcdAccess struct {
	tls     *tls.Config // nil: plain http
	ctlArgs []string    // etcdctl's TLS flags
}

func (a etcdAccess) httpClient() *http.Client {
	return &http.Client{Timeout: time.Second, Transport: &http.Transport{TLSClientConfig: a.tls}}
}
