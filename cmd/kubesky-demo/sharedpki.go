package main

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubesky/kubesky/internal/kubeproc"
)

// The common names etcd-pki gives its certificates. deploy/shared-etcd's
// members accept peers by the member name (--peer-cert-allowed-cn).
const (
	etcdMemberCN = "kubesky-etcd-member"
	etcdClientCN = "kubesky"
)

// defaultEtcdNames are the names deploy/shared-etcd gives its members: the
// fixed cluster IPs of their Services and their hostAliases.
var defaultEtcdNames = []string{
	"10.96.0.11", "10.96.0.12", "10.96.0.13",
	"kubesky-etcd-0.peer", "kubesky-etcd-1.peer", "kubesky-etcd-2.peer",
}

// sharedPKIConfig says what etcd-pki writes.
type sharedPKIConfig struct {
	dir      string
	names    []string
	validity time.Duration
}

func etcdPKICommand(_ context.Context, args []string, stdout, stderr io.Writer) int {
	c := sharedPKIConfig{validity: 365 * 24 * time.Hour}
	fs := pflag.NewFlagSet("etcd-pki", pflag.ContinueOnError)
	fs.StringVar(&c.dir, "dir", "", "directory to write into (required; it must not hold a ca.crt yet)")
	fs.StringSliceVar(&c.names, "name", defaultEtcdNames, "DNS name or IP of the etcd members, repeatable (127.0.0.1 and localhost are always added)")
	fs.DurationVar(&c.validity, "validity", c.validity, "how long the certificates are valid")
	summary := "Writes the TLS files of deploy/shared-etcd's Secret kubesky-etcd-tls: a new CA (ca.crt),\n" +
		"the members' serving and peer certificate (member.crt, member.key) and the client\n" +
		"certificate of kube2sky and skydns (client.crt, client.key). The CA's key is not kept:\n" +
		"run it again into an empty directory to renew them all.\n\n" +
		"  kubectl -n kube-system create secret generic kubesky-etcd-tls --from-file=<dir>"
	if code, exit := parseFlags(fs, args, summary, stdout, stderr); exit {
		return code
	}
	if err := c.validate(); err != nil {
		fmt.Fprintf(stderr, "kubesky-demo etcd-pki: %v\n", err)
		return 2
	}
	if err := writeEtcdPKI(c); err != nil {
		fmt.Fprintf(stderr, "kubesky-demo etcd-pki: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote ca.crt, member.crt, member.key, client.crt and client.key in %s\n", c.dir)
	return 0
}

func (c sharedPKIConfig) validate() error {
	switch {
	case c.dir == "":
		return errors.New("--dir is required")
	case c.validity <= 0:
		return fmt.Errorf("--validity must be positive, got %s", c.validity)
	}
	for _, name := range c.names {
		if name == "" {
			return errors.New("--name: an empty name")
		}
	}
	return nil
}

// writeEtcdPKI writes a CA and the member and client certificates it signs,
// refusing to replace an existing CA.
func writeEtcdPKI(c sharedPKIConfig) error {
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(c.dir, "ca.crt")); err == nil {
		return fmt.Errorf("%s already holds a ca.crt: write into an empty directory", c.dir)
	}
	ca, err := kubeproc.NewCA(c.dir, c.validity)
	if err != nil {
		return err
	}
	member := kubeproc.CertTemplate(etcdMemberCN, c.validity)
	member.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	addNames(member, append([]string{"127.0.0.1", "localhost"}, c.names...))
	if _, _, err := ca.Issue("member", member); err != nil {
		return err
	}
	// A client certificate without names: etcd checks the names of any
	// certificate that has some against the address it connects from.
	client := kubeproc.CertTemplate(etcdClientCN, c.validity)
	client.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	_, _, err = ca.Issue("client", client)
	return err
}

// addNames adds each name to tmpl as an IP address or a DNS name.
func addNames(tmpl *x509.Certificate, names []string) {
	for _, name := range names {
		if ip := net.ParseIP(name); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, name)
		}
	}
}
