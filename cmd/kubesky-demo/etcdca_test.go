package main

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestPKIReplacesTheCAsInThreeSteps follows docs/operations.md: new CAs
// made with their keys kept; then every ca.crt trusting the old and the
// new CAs while the keys are renewed under the old; then issued under the
// new, the old still trusted; then the new alone. At each step a
// certificate of the step before verifies (the pods roll one at a time),
// and at the end a certificate of the old CAs no longer does.
func TestPKIReplacesTheCAsInThreeSteps(t *testing.T) {
	base := []string{"--etcd-only", "--etcd-member", "etcd1", "--etcd-user", "relay", "--etcd-reader", "skydns"}
	oldDir, newDir := makeCAs(t, base), makeCAs(t, base)
	old, fresh := caFiles(oldDir), caFiles(newDir)
	tls := filepath.Join(t.TempDir(), "tls")
	etcd := filepath.Join(tls, "etcd")
	leaves := map[string]string{"client-relay": etcd, "skydns": filepath.Join(etcd, "readers")}
	bundles := map[string]int{filepath.Join(etcd, "ca.crt"): 0, filepath.Join(etcd, "readers", "ca.crt"): 1}

	issue := func(t *testing.T, args ...string) map[string]*x509.Certificate {
		t.Helper()
		if code, _, errOut := runMain(t, append(append([]string{"pki", "--force", "--dir", tls}, base...), args...)...); code != 0 {
			t.Fatalf("code %d: %s", code, errOut)
		}
		certs := map[string]*x509.Certificate{}
		for name, dir := range leaves {
			certs[name] = verifyCert(t, dir, name, x509.ExtKeyUsageClientAuth)
		}
		return certs
	}
	var first, second map[string]*x509.Certificate
	t.Run("first every ca.crt trusts the old CA, then the new, and the keys are issued under the old", func(t *testing.T) {
		first = issue(t, append(old.issue(), fresh.trust()...)...)
		for bundle, i := range bundles {
			checkCAs(t, bundle, old.certs[i], fresh.certs[i])
		}
		checkVerify(t, first, old, true)
	})
	t.Run("then they are issued under the new CA, and the old is still trusted", func(t *testing.T) {
		second = issue(t, append(fresh.issue(), old.trust()...)...)
		for bundle, i := range bundles {
			checkCAs(t, bundle, fresh.certs[i], old.certs[i])
		}
		checkVerify(t, second, fresh, true)
		checkVerify(t, first, caFiles(etcd), true)
	})
	t.Run("last every ca.crt trusts the new CA alone: the old keys open nothing", func(t *testing.T) {
		issue(t, fresh.issue()...)
		for bundle, i := range bundles {
			checkCAs(t, bundle, fresh.certs[i])
		}
		checkVerify(t, second, caFiles(etcd), true)
		checkVerify(t, first, caFiles(etcd), false)
	})
}

// makeCAs runs pki with --etcd-keep-ca-keys and checks that it wrote each
// CA's key, for the owner alone; it returns pki's etcd directory.
func makeCAs(t *testing.T, base []string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "pki")
	if code, _, errOut := runMain(t, append([]string{"pki", "--dir", dir, "--etcd-keep-ca-keys"}, base...)...); code != 0 {
		t.Fatalf("code %d: %s", code, errOut)
	}
	etcd := filepath.Join(dir, "etcd")
	for _, key := range []string{filepath.Join(etcd, "ca.key"), filepath.Join(etcd, "readers", "ca.key")} {
		if info, err := os.Stat(key); err != nil || info.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v; want it, mode 0600", key, err)
		}
	}
	return etcd
}

// cas are the members' and the readers' CA files of a pki etcd directory.
type cas struct {
	dir   string
	certs [2]string // ca.crt, readers/ca.crt
}

func caFiles(etcd string) cas {
	return cas{dir: etcd, certs: [2]string{filepath.Join(etcd, "ca.crt"), filepath.Join(etcd, "readers", "ca.crt")}}
}

// issue are pki's flags issuing with these CAs.
func (c cas) issue() []string {
	return []string{
		"--etcd-ca-cert", c.certs[0], "--etcd-ca-key", filepath.Join(c.dir, "ca.key"),
		"--etcd-readers-ca-cert", c.certs[1], "--etcd-readers-ca-key", filepath.Join(c.dir, "readers", "ca.key"),
	}
}

// trust are pki's flags trusting these CAs besides.
func (c cas) trust() []string {
	return []string{"--etcd-also-trust", c.certs[0], "--etcd-readers-also-trust", c.certs[1]}
}

// checkCAs checks that bundle holds the certificates of files, in order.
func checkCAs(t *testing.T, bundle string, files ...string) {
	t.Helper()
	var want []byte
	for _, f := range files {
		want = append(want, readFile(t, f)...)
	}
	if got := readFile(t, bundle); got != string(want) {
		t.Errorf("%s holds %d certificates, not those of %v", bundle, countPEM(got), files)
	}
}

func countPEM(s string) int {
	n := 0
	for block, rest := pem.Decode([]byte(s)); block != nil; block, rest = pem.Decode(rest) {
		n++
	}
	return n
}

// checkVerify checks that the members' leaves verify under c's ca.crt and
// the readers' under its readers/ca.crt, or (want false) that none does.
func checkVerify(t *testing.T, certs map[string]*x509.Certificate, c cas, want bool) {
	t.Helper()
	for name, cert := range certs {
		roots := x509.NewCertPool()
		caFile := c.certs[0]
		if name == "skydns" {
			caFile = c.certs[1]
		}
		roots.AppendCertsFromPEM([]byte(readFile(t, caFile)))
		_, err := cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
		if (err == nil) != want {
			t.Errorf("%s under %s: %v; want verified %v", name, caFile, err, want)
		}
	}
}

// TestOperationsGivesPKIFlags: every etcd flag of docs/operations.md's
// section on the etcd certificates is one of pki's.
func TestOperationsGivesPKIFlags(t *testing.T) {
	doc := readFile(t, filepath.Join("..", "..", "docs", "operations.md"))
	_, section, _ := strings.Cut(doc, "## Renewing the etcd certificates")
	section, _, _ = strings.Cut(section, "\n## ")
	_, usage, _ := runMain(t, "pki", "--help")
	flags := regexp.MustCompile(`--etcd-[a-z-]+`).FindAllString(section, -1)
	if len(flags) < 5 {
		t.Fatalf("docs/operations.md gives %d etcd flags of pki, want the CA replacement's", len(flags))
	}
	for _, flag := range flags {
		if !strings.Contains(usage, flag+" ") {
			t.Errorf("docs/operations.md gives %s, which pki does not have", flag)
		}
	}
}
