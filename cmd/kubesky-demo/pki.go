package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubesky/kubesky/internal/kubeproc"
)

// pkiConfig says what pki writes.
type pkiConfig struct {
	dir        string
	server     string        // the URL written into <dir>/kubeconfig
	hostServer string        // if set, the URL written into <dir>/kubeconfig-host
	names      []string      // extra names and IPs of the serving certificate
	validity   time.Duration // of the certificates
	force      bool          // write new files even when they exist
	etcd       etcdPKIConfig // with members: the etcd cluster's certificates, in <dir>/etcd
	etcdOnly   bool          // write the etcd files alone, not the API server's
}

// kubeconfigs returns the kubeconfig files to write and their server URLs.
func (c pkiConfig) kubeconfigs() map[string]string {
	files := map[string]string{filepath.Join(c.dir, "kubeconfig"): c.server}
	if c.hostServer != "" {
		files[filepath.Join(c.dir, "kubeconfig-host")] = c.hostServer
	}
	return files
}

func pkiCommand(_ context.Context, args []string, stdout, stderr io.Writer) int {
	c := pkiConfig{validity: 365 * 24 * time.Hour, etcd: etcdPKIConfig{users: etcdUsers(), ca: caFlags{flag: "--etcd"}, readersCA: caFlags{flag: "--etcd-readers"}}}
	fs := pflag.NewFlagSet("pki", pflag.ContinueOnError)
	fs.StringVar(&c.dir, "dir", "", "directory to write into (required)")
	fs.StringVar(&c.server, "server", "https://127.0.0.1:6443", "API server URL for <dir>/kubeconfig")
	fs.StringVar(&c.hostServer, "host-server", "", "API server URL for <dir>/kubeconfig-host, a second kubeconfig (say, for the host of a container)")
	fs.StringSliceVar(&c.names, "name", nil, "extra DNS name or IP of the API server's certificate, repeatable")
	fs.DurationVar(&c.validity, "validity", c.validity, "how long the certificates are valid")
	fs.BoolVar(&c.force, "force", false, "write new files even if they exist")
	fs.StringSliceVar(&c.etcd.members, "etcd-member", nil, "name of an etcd member, repeatable: writes <dir>/etcd/ with a CA, each member's certificate and one client certificate per etcd user")
	fs.StringSliceVar(&c.etcd.names, "etcd-name", nil, "extra DNS name or IP in every member's certificate, repeatable (the addresses clients and peers dial)")
	fs.StringSliceVar(&c.etcd.users, "etcd-user", c.etcd.users, "etcd user given a client certificate (client-<user>.crt, common name = user), repeatable")
	fs.StringSliceVar(&c.etcd.readers, "etcd-reader", nil, "reader of the relay (skydns relay) given a client certificate of a CA of the readers' own, which no member trusts: <dir>/etcd/readers/<reader>.crt, common name = reader, and readers/ca.crt; repeatable")
	fs.StringSliceVar(&c.etcd.relay, "etcd-relay-name", nil, "DNS name or IP of the relay: writes <dir>/etcd/relay.crt/.key, its serving certificate; repeatable")
	fs.BoolVar(&c.etcdOnly, "etcd-only", false, "write only <dir>/etcd, not the API server's files and kubeconfigs")
	fs.StringVar(&c.etcd.ca.cert, "etcd-ca-cert", "", "issue the etcd certificates with this CA certificate (PEM) instead of a new CA")
	fs.StringVar(&c.etcd.ca.key, "etcd-ca-key", "", "the private key (PEM) of --etcd-ca-cert")
	fs.StringVar(&c.etcd.readersCA.cert, "etcd-readers-ca-cert", "", "issue the readers' certificates with this CA certificate (PEM) instead of a new CA: renewing them under the CA the relays trust")
	fs.StringVar(&c.etcd.readersCA.key, "etcd-readers-ca-key", "", "the private key (PEM) of --etcd-readers-ca-cert")
	fs.StringSliceVar(&c.etcd.ca.alsoTrust, "etcd-also-trust", nil, "CA certificates (PEM file) that <dir>/etcd/ca.crt trusts besides the issuing CA, while the CA is replaced; repeatable")
	fs.StringSliceVar(&c.etcd.readersCA.alsoTrust, "etcd-readers-also-trust", nil, "CA certificates (PEM file) that readers/ca.crt trusts besides the readers' CA, while it is replaced; repeatable")
	fs.BoolVar(&c.etcd.keepCAKeys, "etcd-keep-ca-keys", false, "write the key of each etcd CA it makes beside its certificate (ca.key, readers/ca.key), to renew and replace with later; keep them off the cluster")
	summary := "Writes a CA, the API server's certificate, a service-account key, a token file with an\n" +
		"admin user in system:masters, and kubeconfigs for that user. With --etcd-member, also an\n" +
		"etcd cluster's certificates in <dir>/etcd (see `kubesky-demo etcd-auth`); --etcd-only\n" +
		"writes those alone (deploy/shared-etcd's Secret). The etcd CAs' keys are kept only with\n" +
		"--etcd-keep-ca-keys. Existing files are kept (without --force), so running it again is safe."
	if code, exit := parseFlags(fs, args, summary, stdout, stderr); exit {
		return code
	}
	c.etcd.dir, c.etcd.validity = filepath.Join(c.dir, "etcd"), c.validity
	if err := c.validate(); err != nil {
		fmt.Fprintf(stderr, "kubesky-demo pki: %v\n", err)
		return 2
	}
	wrote, err := writePKI(c)
	if err != nil {
		fmt.Fprintf(stderr, "kubesky-demo pki: %v\n", err)
		return 1
	}
	if wrote {
		c.reportWritten(stdout)
	} else {
		fmt.Fprintf(stdout, "kept the existing files in %s (--force writes new ones)\n", c.dir)
	}
	return 0
}

// reportWritten says what pki wrote.
func (c pkiConfig) reportWritten(stdout io.Writer) {
	if !c.etcdOnly {
		fmt.Fprintf(stdout, "wrote certificates, token and kubeconfigs in %s\n", c.dir)
	}
	if len(c.etcd.members) > 0 {
		fmt.Fprintf(stdout, "wrote etcd's CA and certificates for %s and users %s in %s\n",
			strings.Join(c.etcd.members, ", "), strings.Join(c.etcd.users, ", "), c.etcd.dir)
	}
}

func (c pkiConfig) validate() error {
	switch {
	case c.dir == "":
		return fmt.Errorf("--dir is required")
	case c.validity <= 0:
		return fmt.Errorf("--validity must be positive, got %s", c.validity)
	case c.etcdOnly && len(c.etcd.members) == 0:
		return fmt.Errorf("--etcd-only needs --etcd-member")
	}
	return c.etcd.validate()
}

// writePKI writes the API server's files and the kubeconfigs (unless
// etcdOnly), then the etcd files, each set unless it all exists and force
// is off. It reports whether it wrote.
func writePKI(c pkiConfig) (bool, error) {
	wrote, err := writeAPIServerPKI(c)
	if err != nil || len(c.etcd.members) == 0 || (!c.force && c.etcd.exist()) {
		return wrote, err
	}
	return true, c.etcd.write()
}

func writeAPIServerPKI(c pkiConfig) (bool, error) {
	if c.etcdOnly {
		return false, nil
	}
	files := kubeproc.APIServerFilesIn(c.dir)
	if !c.force && files.Exist() && allExist(c.kubeconfigs()) {
		return false, nil
	}
	if err := files.Write(kubeproc.PKIOptions{ExtraNames: c.names, Validity: c.validity}); err != nil {
		return false, err
	}
	for path, server := range c.kubeconfigs() {
		if err := files.WriteKubeconfig(path, server); err != nil {
			return false, err
		}
	}
	return true, nil
}

func allExist(kubeconfigs map[string]string) bool {
	for path := range kubeconfigs {
		if _, err := os.Stat(path); err != nil {
			return false
		}
	}
	return true
}
