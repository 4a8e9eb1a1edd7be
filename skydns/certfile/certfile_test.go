package certfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubesky/kubesky/internal/kubeproc"
)

// issue writes dir/server.crt and dir/server.key, a new pair of ca, and
// returns the files and the certificate's serial number.
func issue(t *testing.T, ca *kubeproc.CA) (certFile, keyFile, serial string) {
	t.Helper()
	tmpl := kubeproc.CertTemplate("server", time.Hour)
	certFile, keyFile, err := ca.Issue("server", tmpl)
	if err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, tmpl.SerialNumber.String()
}

// served is the serial number of the certificate p serves now.
func served(t *testing.T, p *Pair) string {
	t.Helper()
	c, err := p.GetCertificate(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Leaf == nil {
		t.Fatal("no parsed leaf")
	}
	return c.Leaf.SerialNumber.String()
}

func TestAPairFollowsItsFiles(t *testing.T) {
	ca, err := kubeproc.NewCA(t.TempDir(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile, first := issue(t, ca)
	p, err := Load(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if got := served(t, p); got != first {
		t.Fatalf("serving %s, want %s", got, first)
	}
	_, _, second := issue(t, ca)
	t.Run("a new pair on disk is served at the next handshake", func(t *testing.T) {
		if got := served(t, p); got != second {
			t.Fatalf("serving %s, want the new %s", got, second)
		}
	})
	t.Run("a half-written pair keeps the last good one", func(t *testing.T) {
		if err := os.WriteFile(keyFile, []byte("-----BEGIN EC PRIVATE KEY-----\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := served(t, p); got != second {
			t.Fatalf("serving %s, want the last good %s", got, second)
		}
	})
}

func TestLoadErrorsNameTheFlag(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("not PEM\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ cert, key, flag string }{
		{filepath.Join(dir, "missing.crt"), notPEM, "--tls-cert"},
		{notPEM, filepath.Join(dir, "missing.key"), "--tls-key"},
		{notPEM, dir, "--tls-key"},
		{notPEM, notPEM, "--tls-cert " + notPEM},
	} {
		if _, err := Load(tc.cert, tc.key); err == nil || !strings.HasPrefix(err.Error(), tc.flag) {
			t.Errorf("Load(%s, %s) = %v, want an error starting %q", tc.cert, tc.key, err, tc.flag)
		}
	}
}
