package kubeproc

import (
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLoadCA(t *testing.T) {
	dir := t.TempDir()
	ca, err := NewCA(dir, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	caKey := filepath.Join(dir, "ca.key")
	if err := ca.WriteKey(caKey); err != nil {
		t.Fatal(err)
	}
	leafCert, leafKey, err := ca.Issue("leaf", CertTemplate("leaf", time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage")
	if err := os.WriteFile(garbage, []byte("not PEM"), 0o600); err != nil {
		t.Fatal(err)
	}

	t.Run("a CA written with WriteKey issues certificates it verifies", func(t *testing.T) {
		out := t.TempDir()
		loaded, err := LoadCA(out, ca.CertFile, caKey)
		if err != nil {
			t.Fatal(err)
		}
		certFile, _, err := loaded.Issue("client", CertTemplate("client", time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		verify(t, filepath.Join(out, "ca.crt"), certFile)
	})
	failures := []struct{ name, cert, key, want string }{
		{"a missing certificate", filepath.Join(dir, "missing.crt"), caKey, "missing.crt"},
		{"a certificate that is not PEM", garbage, caKey, "CA certificate " + garbage},
		{"a key that is not PEM", ca.CertFile, garbage, "key " + garbage},
		{"a key of another certificate", ca.CertFile, leafKey, "private key does not match"},
		{"a certificate that is no CA", leafCert, leafKey, leafCert + " is not a CA certificate"},
	}
	for _, f := range failures {
		t.Run(f.name+" is an error naming it", func(t *testing.T) {
			_, err := LoadCA(t.TempDir(), f.cert, f.key)
			if err == nil || !strings.Contains(err.Error(), f.want) {
				t.Fatalf("LoadCA = %v, want an error saying %q", err, f.want)
			}
		})
	}
}

func verify(t *testing.T, caFile, certFile string) {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(readCert(t, caFile))
	opts := x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}
	if _, err := readCert(t, certFile).Verify(opts); err != nil {
		t.Fatalf("%s does not verify under %s: %v", certFile, caFile, err)
	}
}
