package main

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kubesky/kubesky/etcdstore"
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

func TestEtcdAccountsHoldOnlyThePrefixAsFarAsItsWatchesReach(t *testing.T) {
	watched := "/skydns0\x00\x00\x00\x00\x00\x00\x00"
	for _, a := range etcdAccounts("/skydns") {
		var want []etcdGrant
		switch a.user {
		case "kube2sky":
			want = []etcdGrant{{"/skydns/", "/skydns0", permReadWrite}, {"/skydns0", watched, permRead}}
		case "skydns":
			want = []etcdGrant{{"/skydns/", watched, permRead}}
		default:
			continue
		}
		if !slices.Equal(a.grants, want) {
			t.Errorf("%s: %+q, want %+q", a.user, a.grants, want)
		}
	}
	if got, want := describeGrants(etcdAccounts("/skydns/")[2]), `role skydns (read ["/skydns/", "/skydns0\x00\x00\x00\x00\x00\x00\x00"))`; got != want {
		t.Errorf("describeGrants = %s, want %s", got, want)
	}
	if got, want := describeGrants(etcdAccounts("/skydns/")[3]), "role kube-apiserver (readwrite /registry/*, readwrite compact_rev_key)"; got != want {
		t.Errorf("describeGrants = %s, want %s", got, want)
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
	kube2sky := etcdtest.NewClientWith(t, pki.Options(srv.ClientURL(), pki.Client(t, "kube2sky")))
	requireWatchedReach(t, map[string]*clientv3.Client{"relay": relay, "kube2sky": kube2sky}, "/skydns/")
}

// requireWatchedReach checks that each user may watch prefix over every
// range a ListWatcher opens its watch with after a stall, not past the
// widest, and may write nothing from the prefix's end to there.
func requireWatchedReach(t *testing.T, users map[string]*clientv3.Client, prefix string) {
	t.Helper()
	end := clientv3.GetPrefixRangeEnd(prefix)
	for user, c := range users {
		if err := etcdtest.WatchRangesErr(t.Context(), c, prefix); err != nil {
			t.Errorf("%s: %v", user, err)
		}
		if err := etcdtest.WatchErr(t.Context(), c, prefix, etcdstore.WatchedEnd(prefix)+"\x00"); !errors.Is(err, rpctypes.ErrPermissionDenied) {
			t.Errorf("%s watching past the widest range: %v, want permission denied", user, err)
		}
		for _, key := range []string{end, end + "\x00", end + "\x00\x00\x00\x00\x00\x00"} {
			if _, err := c.Put(t.Context(), key, "{}"); !errors.Is(err, rpctypes.ErrPermissionDenied) {
				t.Errorf("%s writing %q: %v, want permission denied", user, key, err)
			}
		}
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
	for _, prefix := range []string{"/east/", "/clusterset/"} {
		requireWatchedReach(t, map[string]*clientv3.Client{"relay": relay, "kube2sky": kube2sky}, prefix)
	}
}
