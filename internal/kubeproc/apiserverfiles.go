package kubeproc

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// PKIOptions tune the certificates WriteAPIServerFiles creates.
type PKIOptions struct {
	// ExtraNames are more DNS names or IP addresses the serving certificate
	// is valid for (a container's host name, say), besides 127.0.0.1, ::1,
	// localhost and the in-cluster kubernetes.default names.
	ExtraNames []string
	// Validity is how long the certificates are valid (default 24h).
	Validity time.Duration
}

func (o PKIOptions) withDefaults() PKIOptions {
	if o.Validity <= 0 {
		o.Validity = 24 * time.Hour
	}
	return o
}

// APIServerFiles are the files a kube-apiserver needs besides etcd: a CA and
// a serving certificate signed by it, a service-account key, and a token
// file with one user, AdminUser, in system:masters. StartAPIServer uses
// them; so can programs that run a kube-apiserver outside a test (the demo,
// docker compose).
type APIServerFiles struct {
	Dir                   string
	CAFile                string // ca.crt
	CertFile              string // apiserver.crt
	KeyFile               string // apiserver.key
	ServiceAccountKeyFile string // service-account.key, signs and verifies tokens
	TokenFile             string // tokens.csv
	// Token is AdminUser's bearer token; set by Write.
	Token string
}

// APIServerFilesIn returns the paths of the files in dir; it writes nothing.
func APIServerFilesIn(dir string) *APIServerFiles {
	return &APIServerFiles{
		Dir:                   dir,
		CAFile:                filepath.Join(dir, "ca.crt"),
		CertFile:              filepath.Join(dir, "apiserver.crt"),
		KeyFile:               filepath.Join(dir, "apiserver.key"),
		ServiceAccountKeyFile: filepath.Join(dir, "service-account.key"),
		TokenFile:             filepath.Join(dir, "tokens.csv"),
	}
}

// Write creates every file afresh, with a new CA, keys and admin token.
func (f *APIServerFiles) Write(o PKIOptions) error {
	if err := os.MkdirAll(f.Dir, 0o700); err != nil {
		return err
	}
	if _, err := writePKI(f.Dir, o); err != nil {
		return fmt.Errorf("apiserver certificates in %s: %w", f.Dir, err)
	}
	if err := writeServiceAccountKey(f.ServiceAccountKeyFile); err != nil {
		return fmt.Errorf("service-account key: %w", err)
	}
	token, err := newToken()
	if err != nil {
		return err
	}
	line := fmt.Sprintf("%s,%s,%s,\"system:masters\"\n", token, AdminUser, AdminUser)
	if err := os.WriteFile(f.TokenFile, []byte(line), 0o600); err != nil {
		return err
	}
	f.Token = token
	return nil
}

// Exist reports whether every file is present, so a caller can keep them
// across restarts.
func (f *APIServerFiles) Exist() bool {
	for _, path := range []string{f.CAFile, f.CertFile, f.KeyFile, f.ServiceAccountKeyFile, f.TokenFile} {
		if _, err := os.Stat(path); err != nil {
			return false
		}
	}
	return true
}

// Args are the kube-apiserver flags that name these files.
func (f *APIServerFiles) Args() []string {
	return []string{
		"--tls-cert-file=" + f.CertFile,
		"--tls-private-key-file=" + f.KeyFile,
		"--client-ca-file=" + f.CAFile,
		"--token-auth-file=" + f.TokenFile,
		"--service-account-key-file=" + f.ServiceAccountKeyFile,
		"--service-account-signing-key-file=" + f.ServiceAccountKeyFile,
	}
}

// WriteKubeconfig writes a kubeconfig for AdminUser that reaches the API
// server at serverURL and trusts the CA. The CA is embedded, so the file
// works wherever it is copied. It needs the Token that Write set.
func (f *APIServerFiles) WriteKubeconfig(path, serverURL string) error {
	if f.Token == "" {
		return errors.New("writing kubeconfig: no admin token (call Write first)")
	}
	return writeKubeconfig(path, serverURL, f.CAFile, f.Token)
}

func newToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("admin token: %w", err)
	}
	return hex.EncodeToString(b), nil
}
