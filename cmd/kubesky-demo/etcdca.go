package main

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kubesky/kubesky/internal/kubeproc"
)

// caFlags are pki's flags for one of the etcd CAs (the members' or the
// readers'): the CA to issue with, if not a new one, and the CAs the
// ca.crt it writes trusts besides, a bundle for the time two CAs are in
// use (docs/operations.md: replacing the CAs).
type caFlags struct {
	flag      string // the flags' prefix, "--etcd" or "--etcd-readers", for errors
	cert, key string
	alsoTrust []string
}

// validate checks that cert and key go together and that every file of
// alsoTrust holds CA certificates.
func (f caFlags) validate() error {
	if (f.cert == "") != (f.key == "") {
		return fmt.Errorf("%s-ca-cert and %s-ca-key must be given together", f.flag, f.flag)
	}
	_, err := f.trusted()
	return err
}

// given reports whether any of the flags is set.
func (f caFlags) given() bool { return f.cert != "" || len(f.alsoTrust) > 0 }

// trusted is the PEM of every certificate of alsoTrust's files, each of
// which must hold at least one, and only CAs.
func (f caFlags) trusted() ([]byte, error) {
	var out []byte
	for _, file := range f.alsoTrust {
		certs, err := readCACerts(file)
		if err != nil {
			return nil, fmt.Errorf("%s-also-trust %s: %w", f.flag, file, err)
		}
		out = append(out, certs...)
	}
	return out, nil
}

// readCACerts is the PEM of the certificates in file, all CAs.
func readCACerts(file string) ([]byte, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var out []byte
	for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, err
		}
		if !cert.IsCA {
			return nil, fmt.Errorf("%q is not a CA certificate", cert.Subject.CommonName)
		}
		out = append(out, pem.EncodeToMemory(block)...)
	}
	if out == nil {
		return nil, errors.New("holds no PEM certificate")
	}
	return out, nil
}

// issuer is the CA to issue with, writing into dir: the given one, or a
// new one valid for validity, whose key is written to dir/ca.key if
// keepKey (and otherwise not kept). dir/ca.crt is its certificate followed
// by those of alsoTrust.
func (f caFlags) issuer(dir string, validity time.Duration, keepKey bool) (*kubeproc.CA, error) {
	ca, err := f.load(dir, validity, keepKey)
	if err != nil {
		return nil, err
	}
	extra, err := f.trusted()
	if err != nil || extra == nil {
		return ca, err
	}
	own, err := os.ReadFile(ca.CertFile)
	if err != nil {
		return nil, err
	}
	return ca, os.WriteFile(ca.CertFile, append(own, extra...), 0o600)
}

// load loads the given CA or makes a new one.
func (f caFlags) load(dir string, validity time.Duration, keepKey bool) (*kubeproc.CA, error) {
	if f.cert != "" {
		ca, err := kubeproc.LoadCA(dir, f.cert, f.key)
		if err != nil {
			return nil, fmt.Errorf("%s-ca-cert/%s-ca-key: %w", f.flag, f.flag, err)
		}
		return ca, nil
	}
	ca, err := kubeproc.NewCA(dir, validity)
	if err != nil || !keepKey {
		return ca, err
	}
	return ca, ca.WriteKey(caKeyFile(dir))
}

// caKeyFile is where --etcd-keep-ca-keys writes a new CA's key.
func caKeyFile(dir string) string { return filepath.Join(dir, "ca.key") }
