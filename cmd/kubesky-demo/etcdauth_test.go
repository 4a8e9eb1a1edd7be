package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The roles themselves are checked against a real etcd with TLS and auth
// in integration/etcd_auth_test.go and in the compose HA test.

func TestEtcdAuthBadInput(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "root.crt")
	os.WriteFile(notPEM, []byte("not PEM\n"), 0o600)
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no endpoints", nil, "--etcd-endpoints is required"},
		{"a relative prefix", []string{"--etcd-endpoints=https://127.0.0.1:2379", "--prefix=skydns"}, `--prefix "skydns"`},
		{"the whole key space as prefix", []string{"--etcd-endpoints=https://127.0.0.1:2379", "--prefix=/"}, `--prefix "/"`},
		{"a missing client certificate", []string{"--etcd-endpoints=https://127.0.0.1:2379", "--etcd-certfile=/nonexistent/root.crt", "--etcd-keyfile=/nonexistent/root.key"}, "--etcd-certfile: open /nonexistent/root.crt"},
		{"a client certificate that is not PEM", []string{"--etcd-endpoints=https://127.0.0.1:2379", "--etcd-certfile=" + notPEM, "--etcd-keyfile=" + notPEM}, "--etcd-certfile " + notPEM},
	} {
		t.Run(c.name+" exits 2 saying so", func(t *testing.T) {
			code, _, errOut := runMain(t, append([]string{"etcd-auth"}, c.args...)...)
			if code != 2 || !strings.Contains(errOut, c.want) {
				t.Fatalf("code %d, stderr %q; want 2 and %q", code, errOut, c.want)
			}
		})
	}
}

func TestEtcdAccountsHoldOnlyThePrefix(t *testing.T) {
	for _, a := range etcdAccounts("/skydns") {
		switch a.user {
		case "kube2sky":
			if len(a.grants) != 1 || a.grants[0] != (etcdGrant{"/skydns/", true, permReadWrite}) {
				t.Errorf("kube2sky: %+v", a.grants)
			}
		case "skydns":
			if len(a.grants) != 1 || a.grants[0] != (etcdGrant{"/skydns/", true, permRead}) {
				t.Errorf("skydns: %+v", a.grants)
			}
		}
	}
	if got := describeGrants(etcdAccounts("/skydns/")[1]); got != "role kube2sky (readwrite /skydns/*)" {
		t.Errorf("describeGrants = %q", got)
	}
}
