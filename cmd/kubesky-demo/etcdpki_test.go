package main

import (
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubesky/kubesky/deploy"
)

// sharedEtcd is what deploy/shared-etcd's manifests expect of pki's files.
type sharedEtcd struct {
	names   []string // the members' addresses: hostAliases' IPs and names
	peerCN  string   // --peer-cert-allowed-cn
	secrets []string // the Secrets the pods mount
}

// readSharedEtcd reads what the manifests expect of the Secret.
func readSharedEtcd(t *testing.T) sharedEtcd {
	t.Helper()
	objs, err := deploy.NodeLocal() // shared-etcd's objects, and the DaemonSet
	if err != nil {
		t.Fatal(err)
	}
	var s sharedEtcd
	for _, obj := range objs {
		spec, _, _ := unstructured.NestedMap(obj.Object, "spec", "template", "spec")
		aliases, _, _ := unstructured.NestedSlice(spec, "hostAliases")
		for _, a := range aliases {
			s.names = append(s.names, a.(map[string]any)["ip"].(string))
			hostnames, _, _ := unstructured.NestedStringSlice(a.(map[string]any), "hostnames")
			s.names = append(s.names, hostnames...)
		}
		volumes, _, _ := unstructured.NestedSlice(spec, "volumes")
		for _, v := range volumes {
			if name, ok, _ := unstructured.NestedString(v.(map[string]any), "secret", "secretName"); ok {
				s.secrets = append(s.secrets, name)
			}
		}
		for _, arg := range containerArgs(obj) {
			if cn, ok := strings.CutPrefix(arg, "--peer-cert-allowed-cn="); ok {
				s.peerCN = cn
			}
		}
	}
	return s
}

// TestPKIForSharedEtcd checks `pki --etcd-only` with deploy's
// SharedEtcdPKIFlags against deploy/shared-etcd: its member certificate
// holds the members' cluster IPs and hostAliases, its common name is the
// one the members accept from peers, and it writes every file of the
// Secrets the manifests mount.
func TestPKIForSharedEtcd(t *testing.T) {
	want := readSharedEtcd(t)
	dir := filepath.Join(t.TempDir(), "etcd-tls")
	code, out, errOut := runMain(t, append([]string{"pki", "--dir", dir}, deploy.SharedEtcdPKIFlags...)...)
	if code != 0 || !strings.Contains(out, "wrote") {
		t.Fatalf("code %d: %s %s", code, out, errOut)
	}
	etcd := filepath.Join(dir, "etcd")
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM([]byte(readFile(t, filepath.Join(etcd, "ca.crt")))) {
		t.Fatal("ca.crt holds no certificate")
	}
	t.Run("the member certificate serves and dials under every name of the manifests", func(t *testing.T) {
		member := verifyCert(t, etcd, "member-"+want.peerCN, x509.ExtKeyUsageServerAuth)
		for _, name := range append(want.names, "127.0.0.1", "localhost") {
			opts := x509.VerifyOptions{Roots: roots, DNSName: name, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
			if _, err := member.Verify(opts); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
		if member.Subject.CommonName != want.peerCN {
			t.Errorf("common name %q, want %q (--peer-cert-allowed-cn)", member.Subject.CommonName, want.peerCN)
		}
	})
	for _, user := range []string{"root", "kube2sky", "relay"} {
		t.Run(user+"'s client certificate names no host and is for clients only", func(t *testing.T) {
			client := verifyCert(t, etcd, "client-"+user, x509.ExtKeyUsageClientAuth)
			if len(client.DNSNames)+len(client.IPAddresses) != 0 {
				t.Errorf("names %v %v: etcd would check them against the client's address", client.DNSNames, client.IPAddresses)
			}
			if _, err := client.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err == nil {
				t.Error("the client certificate also serves")
			}
		})
	}
	t.Run("the readers' certificates open no member", func(t *testing.T) {
		for _, reader := range []string{"skydns", "node-local"} {
			verifyCert(t, filepath.Join(etcd, "readers"), reader, x509.ExtKeyUsageClientAuth)
			cert := parseCertFile(t, filepath.Join(etcd, "readers", reader+".crt"))
			if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
				t.Errorf("%s's certificate verifies under the members' CA", reader)
			}
		}
	})
	t.Run("it writes every file of the Secrets the manifests mount, and nothing for the API server", func(t *testing.T) {
		if len(want.secrets) == 0 {
			t.Fatal("no Secret mounted")
		}
		for _, secret := range want.secrets {
			files, ok := deploy.EtcdSecrets[secret]
			if !ok {
				t.Errorf("the manifests mount %s, which is not in deploy.EtcdSecrets", secret)
			}
			for key, file := range files {
				if _, err := os.Stat(filepath.Join(etcd, file)); err != nil {
					t.Errorf("%s's %s: %v", secret, key, err)
				}
			}
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("%s holds %d entries, want only etcd/", dir, len(entries))
		}
	})
	t.Run("deploy/README.md gives the same flags", func(t *testing.T) {
		readme := readFile(t, filepath.Join("..", "..", "deploy", "README.md"))
		for _, flag := range deploy.SharedEtcdPKIFlags {
			if !strings.Contains(readme, flag) {
				t.Errorf("deploy/README.md lacks %s", flag)
			}
		}
	})
}

func TestPKIEtcdNames(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := runMain(t, "pki", "--dir", dir, "--etcd-only", "--etcd-member", "etcd1", "--etcd-name", "etcd.example.com,192.0.2.7")
	if code != 0 {
		t.Fatalf("code %d: %s", code, errOut)
	}
	cert := verifyCert(t, filepath.Join(dir, "etcd"), "member-etcd1", x509.ExtKeyUsageServerAuth)
	if strings.Join(cert.DNSNames, ",") != "etcd1,localhost,etcd.example.com" || len(cert.IPAddresses) != 3 || cert.IPAddresses[2].String() != "192.0.2.7" {
		t.Fatalf("names %v %v", cert.DNSNames, cert.IPAddresses)
	}
	for name, c := range map[string]struct {
		args    []string
		message string
	}{
		"a zero --validity is refused":         {[]string{"--validity", "0s"}, "--validity must be positive"},
		"an empty --etcd-name is refused":      {[]string{"--etcd-member", "e", "--etcd-name", "a,,b"}, "an empty name"},
		"a --etcd-name that is no name":        {[]string{"--etcd-member", "e", "--etcd-name", "a_b"}, `--etcd-name "a_b" is neither an IP nor a DNS name`},
		"an empty --etcd-user is refused":      {[]string{"--etcd-member", "e", "--etcd-user", "a,,b"}, "an empty user"},
		"--etcd-only without members is empty": {[]string{"--etcd-only"}, "--etcd-only needs --etcd-member"},
	} {
		t.Run(name, func(t *testing.T) {
			code, _, errOut := runMain(t, append([]string{"pki", "--dir", t.TempDir()}, c.args...)...)
			if code != 2 || !strings.Contains(errOut, c.message) {
				t.Fatalf("code %d, %q; want 2 and %q", code, errOut, c.message)
			}
		})
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
