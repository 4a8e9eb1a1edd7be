package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kubesky/kubesky/etcdstore/etcdtest"
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
		{"a relative clusterset prefix", []string{"--etcd-endpoints=https://127.0.0.1:2379", "--clusterset-prefix=clusterset"}, `--clusterset-prefix "clusterset"`},
		{"a clusterset prefix inside the records'", []string{"--etcd-endpoints=https://127.0.0.1:2379", "--clusterset-prefix=/skydns/cs"}, `--clusterset-prefix "/skydns/cs" overlaps --prefix "/skydns"`},
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

// TestEtcdAuthAsTheSharedEtcdsJobRunsIt runs etcd-auth with the flags of
// deploy/shared-etcd's Job, twice, against an etcd with TLS and client
// certificates: the users are root, kube2sky and relay, auth is on, and
// relay may read the prefix and not write it.
func TestEtcdAuthAsTheSharedEtcdsJobRunsIt(t *testing.T) {
	pki := etcdtest.NewPKI(t)
	srv := etcdtest.StartSecure(t, pki, "root")
	flags := append([]string{"etcd-auth", "--etcd-endpoints=" + srv.ClientURL(), "--reader=relay", "--kube-apiserver=false", "--wait=30s"},
		pki.Flags(pki.Client(t, "root"))...)
	for run := range 2 {
		if code, out, errOut := runMain(t, flags...); code != 0 {
			t.Fatalf("run %d: code %d: %s %s", run+1, code, out, errOut)
		}
	}
	users, err := srv.Client.UserList(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(users.Users, ","); got != "kube2sky,relay,root" {
		t.Errorf("users %s, want kube2sky, relay and root", got)
	}
	relay := etcdtest.NewClientWith(t, pki.Options(srv.ClientURL(), pki.Client(t, "relay")))
	if _, err := relay.Get(t.Context(), "/skydns/", clientv3.WithPrefix()); err != nil {
		t.Errorf("relay reading /skydns/: %v", err)
	}
	if _, err := relay.Put(t.Context(), "/skydns/x", "y"); !errors.Is(err, rpctypes.ErrPermissionDenied) {
		t.Errorf("relay writing /skydns/x: %v, want permission denied", err)
	}
}

// TestEtcdAuthGrantsTheChartsPrefixes runs etcd-auth as the chart's Job
// does for a cluster whose records are under /east and whose clusterset
// records share the etcd: kube2sky may write both prefixes and the relay
// read both, and neither reaches the default /skydns/.
func TestEtcdAuthGrantsTheChartsPrefixes(t *testing.T) {
	pki := etcdtest.NewPKI(t)
	srv := etcdtest.StartSecure(t, pki, "root")
	flags := append([]string{"etcd-auth", "--etcd-endpoints=" + srv.ClientURL(), "--reader=relay", "--kube-apiserver=false",
		"--prefix=/east", "--clusterset-prefix=/clusterset"}, pki.Flags(pki.Client(t, "root"))...)
	if code, out, errOut := runMain(t, flags...); code != 0 {
		t.Fatalf("code %d: %s %s", code, out, errOut)
	}
	kube2sky := etcdtest.NewClientWith(t, pki.Options(srv.ClientURL(), pki.Client(t, "kube2sky")))
	relay := etcdtest.NewClientWith(t, pki.Options(srv.ClientURL(), pki.Client(t, "relay")))
	for _, key := range []string{"/east/local/cluster/x", "/clusterset/clusters/east"} {
		if _, err := kube2sky.Put(t.Context(), key, "{}"); err != nil {
			t.Errorf("kube2sky writing %s: %v", key, err)
		}
		if resp, err := relay.Get(t.Context(), key); err != nil || len(resp.Kvs) != 1 {
			t.Errorf("relay reading %s: %v, %v", key, resp, err)
		}
		if _, err := relay.Put(t.Context(), key, "{}"); !errors.Is(err, rpctypes.ErrPermissionDenied) {
			t.Errorf("relay writing %s: %v, want permission denied", key, err)
		}
	}
	if _, err := kube2sky.Put(t.Context(), "/skydns/x", "{}"); !errors.Is(err, rpctypes.ErrPermissionDenied) {
		t.Errorf("kube2sky writing /skydns/x: %v, want permission denied", err)
	}
	if _, err := relay.Get(t.Context(), "/skydns/", clientv3.WithPrefix()); !errors.Is(err, rpctypes.ErrPermissionDenied) {
		t.Errorf("relay reading /skydns/: %v, want permission denied", err)
	}
}
