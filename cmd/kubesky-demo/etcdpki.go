package main

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubesky/kubesky/internal/kubeproc"
)

// etcdPKIConfig says what pki writes for an etcd cluster that talks TLS
// to its clients and its peers: a CA, a certificate per member (serving
// and peer), and a client certificate per etcd user, whose common name is
// the user (etcd's --client-cert-auth).
type etcdPKIConfig struct {
	dir        string   // <pki dir>/etcd
	members    []string // member names, which are also their DNS names
	names      []string // more DNS names and IPs in every member's certificate
	users      []string // the etcd users given a client certificate
	readers    []string // readers of the relay, given certificates of a CA of their own (readers/)
	relay      []string // if set, the names and IPs of the relay's serving certificate (relay.crt)
	ca         caFlags  // the members' CA: ca.crt
	readersCA  caFlags  // the readers' CA: readers/ca.crt
	keepCAKeys bool     // write the keys of the CAs it makes (ca.key beside ca.crt)
	validity   time.Duration
}

// validate checks the etcd flags of pki.
func (c etcdPKIConfig) validate() error {
	for _, m := range c.members {
		if errs := validation.IsDNS1123Subdomain(m); len(errs) > 0 {
			return fmt.Errorf("--etcd-member %q is not a DNS name: %s", m, errs[0])
		}
	}
	if err := validateNames(c.names); err != nil {
		return err
	}
	for _, user := range append(slices.Clone(c.users), c.readers...) {
		if user == "" {
			return errors.New("--etcd-user or --etcd-reader: an empty user")
		}
	}
	if err := validateNames(c.relay); err != nil {
		return fmt.Errorf("--etcd-relay-name: %w", err)
	}
	switch {
	case c.ca.given() && len(c.members) == 0:
		return fmt.Errorf("--etcd-ca-cert and --etcd-also-trust need --etcd-member")
	case c.readersCA.given() && len(c.readers) == 0:
		return fmt.Errorf("--etcd-readers-ca-cert and --etcd-readers-also-trust need --etcd-reader")
	case c.keepCAKeys && len(c.members) == 0:
		return fmt.Errorf("--etcd-keep-ca-keys needs --etcd-member")
	}
	if err := c.ca.validate(); err != nil {
		return err
	}
	return c.readersCA.validate()
}

// validateNames checks that each of --etcd-name is an IP or a DNS name.
func validateNames(names []string) error {
	for _, name := range names {
		if name == "" {
			return errors.New("--etcd-name: an empty name")
		}
		if net.ParseIP(name) != nil {
			continue
		}
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			return fmt.Errorf("--etcd-name %q is neither an IP nor a DNS name: %s", name, errs[0])
		}
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
	for _, user := range c.users {
		files = append(files, c.clientFile(user)+".crt", c.clientFile(user)+".key")
	}
	if len(c.relay) > 0 {
		files = append(files, filepath.Join(c.dir, relayName+".crt"), filepath.Join(c.dir, relayName+".key"))
	}
	if len(c.readers) > 0 {
		files = append(files, filepath.Join(c.readersDir(), "ca.crt"))
	}
	files = append(files, c.keptCAKeys()...)
	for _, r := range c.readers {
		files = append(files, filepath.Join(c.readersDir(), r+".crt"), filepath.Join(c.readersDir(), r+".key"))
	}
	return files
}

// keptCAKeys are the files --etcd-keep-ca-keys writes: the key of each CA
// pki makes rather than loads.
func (c etcdPKIConfig) keptCAKeys() []string {
	var keys []string
	if c.keepCAKeys && c.ca.cert == "" {
		keys = append(keys, caKeyFile(c.dir))
	}
	if c.keepCAKeys && c.readersCA.cert == "" && len(c.readers) > 0 {
		keys = append(keys, caKeyFile(c.readersDir()))
	}
	return keys
}

// relayName is the file name (without .crt or .key) of the relay's
// serving certificate, and its common name without the prefix.
const relayName = "relay"

// readersDir holds the readers' CA and certificates: a CA the etcd
// members do not trust, so that a reader's key opens the relay and no
// member.
func (c etcdPKIConfig) readersDir() string { return filepath.Join(c.dir, "readers") }

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
	ca, err := c.ca.issuer(c.dir, c.validity, c.keepCAKeys)
	if err != nil {
		return err
	}
	for _, m := range c.members {
		if _, _, err := ca.Issue("member-"+m, c.memberTemplate(m)); err != nil {
			return err
		}
	}
	for _, user := range c.users {
		if _, _, err := ca.Issue("client-"+user, c.clientTemplate(user)); err != nil {
			return err
		}
	}
	if len(c.relay) > 0 {
		if _, _, err := ca.Issue(relayName, c.relayTemplate()); err != nil {
			return err
		}
	}
	return c.writeReaders()
}

// writeReaders issues each reader's client certificate with a CA of
// their own: the given one, or a new one.
func (c etcdPKIConfig) writeReaders() error {
	if len(c.readers) == 0 {
		return nil
	}
	if err := os.MkdirAll(c.readersDir(), 0o700); err != nil {
		return err
	}
	ca, err := c.readersCA.issuer(c.readersDir(), c.validity, c.keepCAKeys)
	if err != nil {
		return err
	}
	for _, r := range c.readers {
		if _, _, err := ca.Issue(r, c.clientTemplate(r)); err != nil {
			return err
		}
	}
	return nil
}

// relayTemplate is the relay's serving certificate: for its names alone,
// a server's and not a client's, so that it opens no member.
func (c etcdPKIConfig) relayTemplate() *x509.Certificate {
	tmpl := kubeproc.CertTemplate("kubesky-etcd-"+relayName, c.validity)
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	addNames(tmpl, c.relay)
	return tmpl
}

// memberTemplate is a member's certificate: it serves clients and peers
// under its name, localhost and loopback (for a port published on the
// host) and the names of --etcd-name, and is the client certificate it
// shows its peers.
func (c etcdPKIConfig) memberTemplate(name string) *x509.Certificate {
	tmpl := kubeproc.CertTemplate(name, c.validity)
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	tmpl.DNSNames = []string{name, "localhost"}
	tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}
	addNames(tmpl, c.names)
	return tmpl
}

// clientTemplate is a user's (or a relay reader's) client certificate. It
// names no host: etcd checks the names of any client certificate that has
// some against the address it connects from.
func (c etcdPKIConfig) clientTemplate(user string) *x509.Certificate {
	tmpl := kubeproc.CertTemplate(user, c.validity)
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	return tmpl
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
