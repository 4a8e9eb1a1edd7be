package kubeproc

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
)

func TestAPIServerFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pki")
	files := APIServerFilesIn(dir)
	if files.Exist() {
		t.Fatal("Exist before Write")
	}
	opts := PKIOptions{ExtraNames: []string{"kube-apiserver", "192.0.2.7"}, Validity: 48 * time.Hour}
	if err := files.Write(opts); err != nil {
		t.Fatal(err)
	}

	t.Run("every file exists after Write", func(t *testing.T) {
		if !files.Exist() {
			t.Fatal("Exist after Write = false")
		}
	})
	t.Run("the serving certificate has the extra names and validity", func(t *testing.T) {
		cert := readCert(t, files.CertFile)
		if !slices.Contains(cert.DNSNames, "kube-apiserver") || !slices.Contains(cert.DNSNames, "localhost") {
			t.Errorf("DNS names %v", cert.DNSNames)
		}
		if err := cert.VerifyHostname("192.0.2.7"); err != nil {
			t.Error(err)
		}
		if left := time.Until(cert.NotAfter); left < 47*time.Hour || left > 49*time.Hour {
			t.Errorf("valid for %s more, want ~48h", left)
		}
	})
	t.Run("the token file holds the admin token in system:masters", func(t *testing.T) {
		data, err := os.ReadFile(files.TokenFile)
		if err != nil || !strings.HasPrefix(string(data), files.Token+","+AdminUser) || !strings.Contains(string(data), "system:masters") {
			t.Fatalf("%q, %v", data, err)
		}
	})
	t.Run("the kubeconfig embeds the CA and the token", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "kubeconfig")
		if err := files.WriteKubeconfig(path, "https://kube-apiserver:6443"); err != nil {
			t.Fatal(err)
		}
		cfg, err := clientcmd.BuildConfigFromFlags("", path)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Host != "https://kube-apiserver:6443" || cfg.BearerToken != files.Token || len(cfg.CAData) == 0 {
			t.Fatalf("host %q token %q CA %d bytes", cfg.Host, cfg.BearerToken, len(cfg.CAData))
		}
	})
	t.Run("the args name the files", func(t *testing.T) {
		args := strings.Join(LocalAPIServerArgs(6443, "http://127.0.0.1:2379", files), " ")
		for _, want := range []string{"--token-auth-file=" + files.TokenFile, "--secure-port=6443", "--cert-dir=" + dir} {
			if !strings.Contains(args, want) {
				t.Errorf("args lack %s", want)
			}
		}
	})
}

func TestAPIServerFilesKubeconfigNeedsAToken(t *testing.T) {
	files := APIServerFilesIn(t.TempDir())
	if err := files.WriteKubeconfig(filepath.Join(t.TempDir(), "k"), "https://127.0.0.1:1"); err == nil {
		t.Fatal("want an error without Write")
	}
}

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(data)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}
