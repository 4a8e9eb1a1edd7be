package harness

import (
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
	tmpl := certTemplate("kubesky-harness-ca", validity)
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
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := certTemplate("kube-apiserver", o.Validity)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
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
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("creating serving certificate: %w", err)
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
