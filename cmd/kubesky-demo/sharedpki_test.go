package main

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubesky/kubesky/deploy"
)

func TestEtcdPKI(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "etcd-tls")
	code, out, errOut := runMain(t, "etcd-pki", "--dir", dir)
	if code != 0 || !strings.Contains(out, "wrote") {
		t.Fatalf("code %d: %s %s", code, out, errOut)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM([]byte(readFile(t, filepath.Join(dir, "ca.crt")))) {
		t.Fatal("ca.crt holds no certificate")
	}
	member := loadPair(t, dir, "member")
	t.Run("the member certificate serves and dials under every default name", func(t *testing.T) {
		for _, name := range append(defaultEtcdNames, "127.0.0.1", "localhost") {
			opts := x509.VerifyOptions{Roots: roots, DNSName: name, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
			if _, err := member.Verify(opts); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
		if member.Subject.CommonName != etcdMemberCN {
			t.Errorf("common name %q, want %q (--peer-cert-allowed-cn)", member.Subject.CommonName, etcdMemberCN)
		}
	})
	t.Run("the client certificate names no host and is for clients only", func(t *testing.T) {
		client := loadPair(t, dir, "client")
		if len(client.DNSNames)+len(client.IPAddresses) != 0 {
			t.Errorf("names %v %v: etcd would check them against the client's address", client.DNSNames, client.IPAddresses)
		}
		if _, err := client.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
			t.Error(err)
		}
		if _, err := client.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err == nil {
			t.Error("the client certificate also serves")
		}
	})
	t.Run("--name replaces the default names", func(t *testing.T) {
		other := filepath.Join(t.TempDir(), "x")
		if code, _, errOut := runMain(t, "etcd-pki", "--dir", other, "--name", "etcd.example.com,192.0.2.7"); code != 0 {
			t.Fatalf("code %d: %s", code, errOut)
		}
		cert := loadPair(t, other, "member")
		if strings.Join(cert.DNSNames, ",") != "localhost,etcd.example.com" || len(cert.IPAddresses) != 2 || cert.IPAddresses[1].String() != "192.0.2.7" {
			t.Fatalf("names %v %v", cert.DNSNames, cert.IPAddresses)
		}
	})
	for name, c := range map[string]struct {
		args    []string
		code    int
		message string
	}{
		"--dir is required":                  {[]string{"etcd-pki"}, 2, "--dir is required"},
		"a zero --validity is refused":       {[]string{"etcd-pki", "--dir", t.TempDir(), "--validity", "0s"}, 2, "--validity must be positive"},
		"an empty --name is refused":         {[]string{"etcd-pki", "--dir", t.TempDir(), "--name", "a,,b"}, 2, "an empty name"},
		"an existing CA is never replaced":   {[]string{"etcd-pki", "--dir", dir}, 1, "already holds a ca.crt"},
		"a directory that cannot be created": {[]string{"etcd-pki", "--dir", filepath.Join(dir, "ca.crt", "sub")}, 1, "not a directory"},
	} {
		t.Run(name, func(t *testing.T) {
			code, _, errOut := runMain(t, c.args...)
			if code != c.code || !strings.Contains(errOut, c.message) {
				t.Fatalf("code %d, %q; want %d and %q", code, errOut, c.code, c.message)
			}
		})
	}
}

// loadPair loads dir/name.crt with its key and returns the certificate.
func loadPair(t *testing.T, dir, name string) *x509.Certificate {
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
	return cert
}

// TestEtcdPKIFitsSharedEtcd checks etcd-pki against deploy/shared-etcd:
// its default names are the members' cluster IPs and hostAliases, its
// member common name is the one the members accept from peers, and it
// writes every key the manifests mount from the Secret.
func TestEtcdPKIFitsSharedEtcd(t *testing.T) {
	objs, err := deploy.SharedEtcd()
	if err != nil {
		t.Fatal(err)
	}
	var names, secretKeys []string
	for _, obj := range objs {
		spec, _, _ := unstructured.NestedMap(obj.Object, "spec", "template", "spec")
		aliases, _, _ := unstructured.NestedSlice(spec, "hostAliases")
		for _, a := range aliases {
			names = append(names, a.(map[string]any)["ip"].(string))
			hostnames, _, _ := unstructured.NestedStringSlice(a.(map[string]any), "hostnames")
			names = append(names, hostnames...)
		}
		volumes, _, _ := unstructured.NestedSlice(spec, "volumes")
		for _, v := range volumes {
			items, _, _ := unstructured.NestedSlice(v.(map[string]any), "secret", "items")
			for _, item := range items {
				secretKeys = append(secretKeys, item.(map[string]any)["key"].(string))
			}
		}
		for _, arg := range containerArgs(obj) {
			if cn, ok := strings.CutPrefix(arg, "--peer-cert-allowed-cn="); ok && cn != etcdMemberCN {
				t.Errorf("%s accepts peers named %s; etcd-pki names them %s", obj.GetName(), cn, etcdMemberCN)
			}
		}
	}
	slices.Sort(names)
	if want := slices.Sorted(slices.Values(defaultEtcdNames)); !slices.Equal(names, want) {
		t.Errorf("hostAliases name %v, etcd-pki's defaults %v", names, want)
	}
	dir := filepath.Join(t.TempDir(), "etcd-tls")
	if code, _, errOut := runMain(t, "etcd-pki", "--dir", dir); code != 0 {
		t.Fatal(errOut)
	}
	if len(secretKeys) == 0 {
		t.Fatal("no Secret items mounted")
	}
	for _, key := range secretKeys {
		if _, err := os.Stat(filepath.Join(dir, key)); err != nil {
			t.Errorf("the manifests mount %s: %v", key, err)
		}
	}
}

func containerArgs(obj *unstructured.Unstructured) []string {
	containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
	var args []string
	for _, c := range containers {
		list, _, _ := unstructured.NestedStringSlice(c.(map[string]any), "args")
		args = append(args, list...)
	}
	return args
}
