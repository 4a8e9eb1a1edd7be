package kubeproc

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"path/filepath"
)

// LoadCA reads an existing CA's certificate and private key (PEM) to issue
// with instead of a new CA, and writes its certificate to dir/ca.crt; what
// it issues goes into dir too. Each error names the file at fault.
func LoadCA(dir, certFile, keyFile string) (*CA, error) {
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("CA certificate %s and key %s: %w", certFile, keyFile, err)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("CA certificate %s: %w", certFile, err)
	}
	if !cert.IsCA || cert.KeyUsage&x509.KeyUsageCertSign == 0 {
		return nil, fmt.Errorf("%s is not a CA certificate (it may not sign certificates)", certFile)
	}
	key, ok := pair.PrivateKey.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("CA key %s cannot sign", keyFile)
	}
	c := &CA{Dir: dir, CertFile: filepath.Join(dir, "ca.crt"), key: key, cert: cert}
	return c, writePEM(c.CertFile, "CERTIFICATE", cert.Raw)
}

// WriteKey writes the CA's private key to path (mode 0600), for a CA that
// must outlive this process: LoadCA reads it back.
func (c *CA) WriteKey(path string) error {
	der, err := x509.MarshalPKCS8PrivateKey(c.key)
	if err != nil {
		return fmt.Errorf("CA key: %w", err)
	}
	return writePEM(path, "PRIVATE KEY", der)
}
