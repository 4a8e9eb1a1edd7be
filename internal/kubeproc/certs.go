package kubeproc

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is a throwaway certificate authority and one serving certificate for
// the API server, written as PEM files.
type pki struct {
	CAFile, CertFile, KeyFile string
}

// servingNames are the names a client may use for the API server.
var servingNames = []string{
	"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
	"kubernetes.default.svc.cluster.local",
}

// servingIPs are the addresses a client may use for the API server: loopback
// and the first address of each service CIDR (the `kubernetes` Service).
var servingIPs = []net.IP{
	net.ParseIP("127.0.0.1"), net.ParseIP("::1"),
	net.ParseIP("10.96.0.1"), net.ParseIP("fd00:10:96::1"),
}

// writePKI creates a CA and a serving certificate signed by it in dir.
func writePKI(dir string, o PKIOptions) (pki, error) {
	o = o.withDefaults()
	caKey, caCert, err := newCA(o.Validity)
	if err != nil {
		return pki{}, err
	}
	key, der, err := newServingCert(caKey, caCert, o)
	if err != nil {
		return pki{}, err
	}
	p := pki{
		CAFile:   filepath.Join(dir, "ca.crt"),
		CertFile: filepath.Join(dir, "apiserver.crt"),
		KeyFile:  filepath.Join(dir, "apiserver.key"),
	}
	if err := writePEM(p.CAFile, "CERTIFICATE", caCert.Raw); err != nil {
		return pki{}, err
	}
	if err := writePEM(p.CertFile, "CERTIFICATE", der); err != nil {
		return pki{}, err
	}
	return p, writeECKey(p.KeyFile, key)
}

func newCA(validity time.Duration) (*ecdsa.PrivateKey, *x509.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := certTemplate("kubesky-ca", validity)
	tmpl.IsCA = true
	tmpl.BasicConstraintsValid = true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("creating CA: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	return key, cert, err
}

func newServingCert(caKey *ecdsa.PrivateKey, ca *x509.Certificate, o PKIOptions) (*ecdsa.PrivateKey, []byte, error) {
	tmpl := certTemplate("kube-apiserver", o.Validity)
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	tmpl.DNSNames = append([]string(nil), servingNames...)
	tmpl.IPAddresses = append([]net.IP(nil), servingIPs...)
	for _, name := range o.ExtraNames {
		if ip := net.ParseIP(name); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, name)
		}
	}
	return signLeaf(caKey, ca, tmpl)
}

// signLeaf makes a key and a certificate from tmpl signed by ca.
func signLeaf(caKey crypto.Signer, ca, tmpl *x509.Certificate) (*ecdsa.PrivateKey, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("creating certificate for %s: %w", tmpl.Subject.CommonName, err)
	}
	return key, der, nil
}

func certTemplate(cn string, validity time.Duration) *x509.Certificate {
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	now := time.Now()
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(validity),
	}
}

// writeServiceAccountKey writes a fresh EC key that the API server uses both
// to sign and to verify service-account tokens.
func writeServiceAccountKey(path string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	return writeECKey(path, key)
}

func writeECKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(path, "EC PRIVATE KEY", der)
}

func writePEM(path, blockType string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der}), 0o600)
}

// CA is a throwaway certificate authority that writes what it issues into
// Dir: for tests and local clusters that need TLS of their own (etcd's
// client certificates, say).
type CA struct {
	Dir      string
	CertFile string // the CA's certificate, PEM

	key  crypto.Signer
	cert *x509.Certificate
}

// NewCA makes a CA valid for validity and writes its certificate to
// dir/ca.crt.
func NewCA(dir string, validity time.Duration) (*CA, error) {
	key, cert, err := newCA(validity)
	if err != nil {
		return nil, err
	}
	c := &CA{Dir: dir, CertFile: filepath.Join(dir, "ca.crt"), key: key, cert: cert}
	return c, writePEM(c.CertFile, "CERTIFICATE", cert.Raw)
}

// Issue signs tmpl (see CertTemplate) with a new key and writes
// dir/name.crt and dir/name.key.
func (c *CA) Issue(name string, tmpl *x509.Certificate) (certFile, keyFile string, err error) {
	key, der, err := signLeaf(c.key, c.cert, tmpl)
	if err != nil {
		return "", "", err
	}
	certFile, keyFile = filepath.Join(c.Dir, name+".crt"), filepath.Join(c.Dir, name+".key")
	if err := writePEM(certFile, "CERTIFICATE", der); err != nil {
		return "", "", err
	}
	return certFile, keyFile, writeECKey(keyFile, key)
}

// CertTemplate is a certificate for the common name cn, valid from an hour
// ago for validity, to be given its uses and names and passed to Issue.
func CertTemplate(cn string, validity time.Duration) *x509.Certificate {
	return certTemplate(cn, validity)
}
