package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubesky/kubesky/internal/kubeproc"
)

func TestPKI(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pki")
	args := []string{"pki", "--dir", dir, "--server", "https://kube-apiserver:6443",
		"--host-server", "https://127.0.0.1:16443", "--name", "kube-apiserver"}

	t.Run("it writes both kubeconfigs with their servers", func(t *testing.T) {
		code, out, errOut := runMain(t, args...)
		if code != 0 || !strings.Contains(out, "wrote") {
			t.Fatalf("code %d: %s %s", code, out, errOut)
		}
		for file, server := range map[string]string{"kubeconfig": "https://kube-apiserver:6443", "kubeconfig-host": "https://127.0.0.1:16443"} {
			cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, file))
			if err != nil || cfg.Host != server || cfg.BearerToken == "" {
				t.Fatalf("%s: %v, %+v", file, err, cfg)
			}
		}
	})
	t.Run("a second run keeps the files", func(t *testing.T) {
		before := readFile(t, filepath.Join(dir, "tokens.csv"))
		code, out, _ := runMain(t, args...)
		if code != 0 || !strings.Contains(out, "kept") || readFile(t, filepath.Join(dir, "tokens.csv")) != before {
			t.Fatalf("code %d, %q", code, out)
		}
	})
	t.Run("--force writes new ones", func(t *testing.T) {
		before := readFile(t, filepath.Join(dir, "tokens.csv"))
		code, _, _ := runMain(t, append(args, "--force")...)
		if code != 0 || readFile(t, filepath.Join(dir, "tokens.csv")) == before {
			t.Fatalf("code %d, token unchanged", code)
		}
	})
	t.Run("--dir is required", func(t *testing.T) {
		code, _, errOut := runMain(t, "pki")
		if code != 2 || !strings.Contains(errOut, "--dir is required") {
			t.Fatalf("code %d, %q", code, errOut)
		}
	})
	t.Run("a directory that cannot be created is an error", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "file")
		os.WriteFile(file, nil, 0o600)
		code, _, errOut := runMain(t, "pki", "--dir", filepath.Join(file, "sub"))
		if code != 1 || errOut == "" {
			t.Fatalf("code %d, %q", code, errOut)
		}
	})
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestPKIForEtcd(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pki")
	args := []string{"pki", "--dir", dir, "--etcd-member", "etcd1,etcd2", "--etcd-member", "etcd3"}

	t.Run("it writes a CA, the members' and the users' certificates", func(t *testing.T) {
		code, out, errOut := runMain(t, args...)
		if code != 0 || !strings.Contains(out, "wrote") {
			t.Fatalf("code %d: %s %s", code, out, errOut)
		}
		etcd := filepath.Join(dir, "etcd")
		for _, m := range []string{"etcd1", "etcd2", "etcd3"} {
			cert := verifyCert(t, etcd, "member-"+m, x509.ExtKeyUsageServerAuth)
			verifyCert(t, etcd, "member-"+m, x509.ExtKeyUsageClientAuth) // peers
			if err := cert.VerifyHostname(m); err != nil {
				t.Error(err)
			}
			if err := cert.VerifyHostname("127.0.0.1"); err != nil { // a port published on the host
				t.Error(err)
			}
		}
		for _, user := range []string{"root", "kube2sky", "skydns", "kube-apiserver"} {
			if cn := verifyCert(t, etcd, "client-"+user, x509.ExtKeyUsageClientAuth).Subject.CommonName; cn != user {
				t.Errorf("client-%s: common name %q", user, cn)
			}
		}
	})
	t.Run("a second run keeps them", func(t *testing.T) {
		before := readFile(t, filepath.Join(dir, "etcd", "client-root.key"))
		code, out, _ := runMain(t, args...)
		if code != 0 || !strings.Contains(out, "kept") || readFile(t, filepath.Join(dir, "etcd", "client-root.key")) != before {
			t.Fatalf("code %d, %q", code, out)
		}
	})
	t.Run("a missing file makes it write them all again", func(t *testing.T) {
		os.Remove(filepath.Join(dir, "etcd", "member-etcd3.key"))
		code, out, _ := runMain(t, args...)
		if code != 0 || !strings.Contains(out, "wrote") {
			t.Fatalf("code %d, %q", code, out)
		}
		verifyCert(t, filepath.Join(dir, "etcd"), "member-etcd3", x509.ExtKeyUsageServerAuth)
	})
	t.Run("with --etcd-ca-cert and --etcd-ca-key it issues with that CA", func(t *testing.T) {
		caCert, caKey := writeCA(t)
		out := filepath.Join(t.TempDir(), "pki")
		code, _, errOut := runMain(t, "pki", "--dir", out, "--etcd-member", "etcd1", "--etcd-ca-cert", caCert, "--etcd-ca-key", caKey)
		if code != 0 {
			t.Fatalf("code %d: %s", code, errOut)
		}
		if readFile(t, filepath.Join(out, "etcd", "ca.crt")) != readFile(t, caCert) {
			t.Fatal("etcd/ca.crt is not the given CA")
		}
		verifyCert(t, filepath.Join(out, "etcd"), "client-skydns", x509.ExtKeyUsageClientAuth)
	})
}

func TestPKIForEtcdBadInput(t *testing.T) {
	caCert, caKey := writeCA(t)
	notPEM := filepath.Join(t.TempDir(), "ca.crt")
	os.WriteFile(notPEM, []byte("not PEM\n"), 0o600)
	leaf := issueLeaf(t, caCert, caKey)
	for _, c := range []struct {
		name     string
		args     []string
		wantCode int
		want     string
	}{
		{"a member name that is no DNS name", []string{"--etcd-member", "Etcd_1"}, 2, `--etcd-member "Etcd_1" is not a DNS name`},
		{"a CA certificate without its key", []string{"--etcd-member", "etcd1", "--etcd-ca-cert", caCert}, 2, "--etcd-ca-cert and --etcd-ca-key must be given together"},
		{"a CA without members", []string{"--etcd-ca-cert", caCert, "--etcd-ca-key", caKey}, 2, "--etcd-ca-cert and --etcd-also-trust need --etcd-member"},
		{"a CA to trust besides without members", []string{"--etcd-also-trust", caCert}, 2, "--etcd-ca-cert and --etcd-also-trust need --etcd-member"},
		{"CA keys to keep without members", []string{"--etcd-keep-ca-keys"}, 2, "--etcd-keep-ca-keys needs --etcd-member"},
		{"a CA to trust besides that is missing", []string{"--etcd-member", "etcd1", "--etcd-also-trust", "/nonexistent/ca.crt"}, 2, "--etcd-also-trust /nonexistent/ca.crt: open /nonexistent/ca.crt"},
		{"a CA to trust besides that is not PEM", []string{"--etcd-member", "etcd1", "--etcd-also-trust", notPEM}, 2, "--etcd-also-trust " + notPEM + ": holds no PEM certificate"},
		{"a CA to trust besides that is no CA", []string{"--etcd-member", "etcd1", "--etcd-reader", "r", "--etcd-readers-also-trust", leaf}, 2, "--etcd-readers-also-trust " + leaf + `: "leaf" is not a CA certificate`},
		{"a missing CA certificate", []string{"--etcd-member", "etcd1", "--etcd-ca-cert", "/nonexistent/ca.crt", "--etcd-ca-key", caKey}, 1, "--etcd-ca-cert/--etcd-ca-key: CA certificate /nonexistent/ca.crt"},
		{"a CA certificate that is not PEM", []string{"--etcd-member", "etcd1", "--etcd-ca-cert", notPEM, "--etcd-ca-key", caKey}, 1, "CA certificate " + notPEM},
		{"a CA key that is not PEM", []string{"--etcd-member", "etcd1", "--etcd-ca-cert", caCert, "--etcd-ca-key", notPEM}, 1, "key " + notPEM},
		{"a readers' CA certificate without its key", []string{"--etcd-member", "etcd1", "--etcd-reader", "r", "--etcd-readers-ca-cert", caCert}, 2, "--etcd-readers-ca-cert and --etcd-readers-ca-key must be given together"},
		{"a readers' CA without readers", []string{"--etcd-member", "etcd1", "--etcd-readers-ca-cert", caCert, "--etcd-readers-ca-key", caKey}, 2, "--etcd-readers-ca-cert and --etcd-readers-also-trust need --etcd-reader"},
		{"a readers' CA to trust besides without readers", []string{"--etcd-member", "etcd1", "--etcd-readers-also-trust", caCert}, 2, "--etcd-readers-ca-cert and --etcd-readers-also-trust need --etcd-reader"},
		{"a readers' CA key that is not PEM", []string{"--etcd-member", "etcd1", "--etcd-reader", "r", "--etcd-readers-ca-cert", caCert, "--etcd-readers-ca-key", notPEM}, 1, "--etcd-readers-ca-cert/--etcd-readers-ca-key: CA certificate " + caCert + " and key " + notPEM},
	} {
		t.Run(c.name+" is an error saying so", func(t *testing.T) {
			args := append([]string{"pki", "--dir", filepath.Join(t.TempDir(), "pki")}, c.args...)
			code, _, errOut := runMain(t, args...)
			if code != c.wantCode || !strings.Contains(errOut, c.want) || strings.Count(errOut, "\n") != 1 {
				t.Fatalf("code %d, stderr %q; want %d and one line saying %q", code, errOut, c.wantCode, c.want)
			}
		})
	}
}

// writeCA writes a CA's certificate and key for --etcd-ca-cert/--etcd-ca-key.
func writeCA(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	ca, err := kubeproc.NewCA(t.TempDir(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	keyFile = filepath.Join(ca.Dir, "ca.key")
	if err := ca.WriteKey(keyFile); err != nil {
		t.Fatal(err)
	}
	return ca.CertFile, keyFile
}

// issueLeaf writes a certificate that is no CA's, issued by the CA.
func issueLeaf(t *testing.T, caCert, caKey string) string {
	t.Helper()
	ca, err := kubeproc.LoadCA(t.TempDir(), caCert, caKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, _, err := ca.Issue("leaf", kubeproc.CertTemplate("leaf", time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// verifyCert checks that dir/name.crt and .key are a pair, that only the
// owner may read the key, and that the certificate verifies under
// dir/ca.crt for usage; it returns it.
func verifyCert(t *testing.T, dir, name string, usage x509.ExtKeyUsage) *x509.Certificate {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key"))
	if err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(filepath.Join(dir, name+".key")); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("%s.key: %v, %v; want mode 0600", name, info.Mode(), err)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM([]byte(readFile(t, filepath.Join(dir, "ca.crt"))))
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return cert
}

// TestPKIForTheRelay: --etcd-relay-name writes the relay's serving
// certificate (for its names, of the etcd CA, no client use), and
// --etcd-reader writes each reader's client certificate under a CA of the
// readers' own, which no etcd member trusts.
func TestPKIForTheRelay(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pki")
	code, out, errOut := runMain(t, "pki", "--dir", dir, "--etcd-only", "--etcd-member", "etcd1", "--etcd-user", "relay",
		"--etcd-reader", "skydns,node-local", "--etcd-relay-name", "10.96.0.14")
	if code != 0 {
		t.Fatalf("code %d: %s %s", code, out, errOut)
	}
	etcd := filepath.Join(dir, "etcd")
	relay := verifyCert(t, etcd, "relay", x509.ExtKeyUsageServerAuth)
	if err := relay.VerifyHostname("10.96.0.14"); err != nil {
		t.Error(err)
	}
	if slices.Contains(relay.ExtKeyUsage, x509.ExtKeyUsageClientAuth) {
		t.Error("the relay's serving certificate is a client certificate too")
	}
	readers := filepath.Join(etcd, "readers")
	for _, r := range []string{"skydns", "node-local"} {
		if cn := verifyCert(t, readers, r, x509.ExtKeyUsageClientAuth).Subject.CommonName; cn != r {
			t.Errorf("reader %s: common name %q", r, cn)
		}
		cert := parseCertFile(t, filepath.Join(readers, r+".crt"))
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM([]byte(readFile(t, filepath.Join(etcd, "ca.crt"))))
		if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
			t.Errorf("reader %s's certificate verifies under the members' CA", r)
		}
	}
}

// TestPKIRenewsUnderTheSameCAs: pki --force with both CAs given issues a
// new key and certificate for every identity, each verifying under the
// CA the old one did, so a rolling restart mixes old and new.
func TestPKIRenewsUnderTheSameCAs(t *testing.T) {
	caCert, caKey := writeCA(t)
	readersCert, readersKey := writeCA(t)
	dir := filepath.Join(t.TempDir(), "pki")
	args := []string{"pki", "--dir", dir, "--etcd-only", "--etcd-member", "etcd1", "--etcd-user", "relay", "--etcd-reader", "skydns",
		"--etcd-ca-cert", caCert, "--etcd-ca-key", caKey, "--etcd-readers-ca-cert", readersCert, "--etcd-readers-ca-key", readersKey}
	etcd := filepath.Join(dir, "etcd")
	files := map[string]string{"member-etcd1": etcd, "client-relay": etcd, "skydns": filepath.Join(etcd, "readers")}
	issue := func(extra ...string) map[string]string {
		if code, _, errOut := runMain(t, append(args, extra...)...); code != 0 {
			t.Fatalf("code %d: %s", code, errOut)
		}
		keys := map[string]string{}
		for name, d := range files {
			verifyCert(t, d, name, x509.ExtKeyUsageClientAuth)
			keys[name] = readFile(t, filepath.Join(d, name+".key"))
		}
		return keys
	}
	old := issue()
	renewed := issue("--force")
	for name := range files {
		if renewed[name] == old[name] {
			t.Errorf("%s kept its key", name)
		}
	}
	if readFile(t, filepath.Join(etcd, "ca.crt")) != readFile(t, caCert) || readFile(t, filepath.Join(etcd, "readers", "ca.crt")) != readFile(t, readersCert) {
		t.Error("a CA changed")
	}
}

func parseCertFile(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode([]byte(readFile(t, path)))
	if block == nil {
		t.Fatalf("%s: no PEM", path)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}
