package harness

import (
	"crypto/tls"
	"net/http"
	"testing"
	"time"

	"github.com/kubesky/kubesky/etcdstore/etcdtest"
)

// EtcdPKI is etcdtest's throwaway CA for etcd (a serving certificate for
// 127.0.0.1, client certificates named after etcd users).
type EtcdPKI = etcdtest.PKI

// ClientCert is a certificate and key file pair.
type ClientCert = etcdtest.Cert

// NewEtcdPKI writes a CA and etcd's serving certificate into a temp dir.
func NewEtcdPKI(t testing.TB) *EtcdPKI { return etcdtest.NewPKI(t) }

// StartSecureEtcd runs bin/etcd serving clients over TLS on 127.0.0.1,
// requiring a client certificate signed by pki's CA. The harness talks to
// it (health, Client, Ctl) as admin, whose certificate it makes; once auth
// is enabled, admin must be an etcd user with the root role.
func StartSecureEtcd(t testing.TB, pki *EtcdPKI, admin string) *Etcd {
	t.Helper()
	cert := pki.Client(t, admin)
	tlsConfig := pki.TLSConfig(t, cert)
	server := pki.Server()
	return startEtcd(t, "https", etcdAccess{
		tls:     tlsConfig,
		ctlArgs: []string{"--cacert=" + pki.CAFile, "--cert=" + cert.CertFile, "--key=" + cert.KeyFile},
	}, "--client-cert-auth", "--trusted-ca-file="+pki.CAFile,
		"--cert-file="+server.CertFile, "--key-file="+server.KeyFile)
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
