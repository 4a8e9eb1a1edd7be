package main

import (
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubesky/kubesky/internal/kubeproc"
)

// etcdPKIConfig says what pki writes for an etcd cluster that talks TLS
// to its clients and its peers: a CA, a certificate per member (serving
// and peer), and a client certificate per etcd user of etcdAccounts, whose
// common name is the user (etcd's --client-cert-auth).
type etcdPKIConfig struct {
	dir      string   // <pki dir>/etcd
	members  []string // member names, which are also their DNS names
	caCert   string   // if set, issue with this CA instead of a new one
	caKey    string
	validity time.Duration
}

// validate checks the etcd flags of pki.
func (c etcdPKIConfig) validate() error {
	for _, m := range c.members {
		if errs := validation.IsDNS1123Subdomain(m); len(errs) > 0 {
			return fmt.Errorf("--etcd-member %q is not a DNS name: %s", m, errs[0])
		}
	}
	if (c.caCert == "") != (c.caKey == "") {
		return fmt.Errorf("--etcd-ca-cert and --etcd-ca-key must be given together")
	}
	if c.caCert != "" && len(c.members) == 0 {
		return fmt.Errorf("--etcd-ca-cert needs --etcd-member")
	}
	return nil
}

func (c etcdPKIConfig) memberFile(name string) string { return filepath.Join(c.dir, "member-"+name) }
func (c etcdPKIConfig) clientFile(user string) string { return filepath.Join(c.dir, "client-"+user) }

// files are every file the etcd PKI consists of.
func (c etcdPKIConfig) files() []string {
	files := []string{filepath.Join(c.dir, "ca.crt")}
	for _, m := range c.members {
		files = append(files, c.memberFile(m)+".crt", c.memberFile(m)+".key")
	}
	for _, user := range etcdUsers() {
		files = append(files, c.clientFile(user)+".crt", c.clientFile(user)+".key")
	}
	return files
}

// exist reports whether every file is there.
func (c etcdPKIConfig) exist() bool {
	for _, f := range c.files() {
		if _, err := os.Stat(f); err != nil {
			return false
		}
	}
	return true
}

// write issues the CA (or loads the given one), the members' and the
// users' certificates.
func (c etcdPKIConfig) write() error {
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return err
	}
	ca, err := c.ca()
	if err != nil {
		return err
	}
	for _, m := range c.members {
		if _, _, err := ca.Issue("member-"+m, c.memberTemplate(m)); err != nil {
			return err
		}
	}
	for _, user := range etcdUsers() {
		tmpl := kubeproc.CertTemplate(user, c.validity)
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
		if _, _, err := ca.Issue("client-"+user, tmpl); err != nil {
			return err
		}
	}
	return nil
}

func (c etcdPKIConfig) ca() (*kubeproc.CA, error) {
	if c.caCert == "" {
		return kubeproc.NewCA(c.dir, c.validity)
	}
	ca, err := kubeproc.LoadCA(c.dir, c.caCert, c.caKey)
	if err != nil {
		return nil, fmt.Errorf("--etcd-ca-cert/--etcd-ca-key: %w", err)
	}
	return ca, nil
}

// memberTemplate is a member's certificate: it serves clients and peers
// under its name, localhost and loopback (for a port published on the
// host), and is the client certificate it shows its peers.
func (c etcdPKIConfig) memberTemplate(name string) *x509.Certificate {
	tmpl := kubeproc.CertTemplate(name, c.validity)
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	tmpl.DNSNames = []string{name, "localhost"}
	tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}
	return tmpl
}
