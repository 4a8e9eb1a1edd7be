package clusterset

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	cs "github.com/kubesky/kubesky/contract/clusterset"
	"github.com/kubesky/kubesky/etcdstore/etcdtest"
)

// brokerWithGrant is an etcd serving TLS with client-certificate auth,
// granted for clusters east and west with auth on, and a client as each
// user the grant made, by name.
func brokerWithGrant(t *testing.T) (*etcdtest.Server, map[string]*clientv3.Client) {
	t.Helper()
	pki := etcdtest.NewPKI(t)
	etcd := etcdtest.StartSecure(t, pki, "root")
	if err := Grant(t.Context(), etcd.Client, cs.DefaultPrefix, []string{"east", "west"}, true); err != nil {
		t.Fatalf("Grant: %v", err)
	}
	clients := map[string]*clientv3.Client{}
	for _, user := range []string{ClusterUser("east"), ClusterUser("west"), ReaderUser} {
		clients[user] = etcdtest.NewClientWith(t, pki.Options(etcd.ClientURL(), pki.Client(t, user)))
	}
	return etcd, clients
}

// TestAClustersUserPublishesItsOwnKeysOnly runs the publisher's claim and
// fenced writes as kube2sky-east, then tries every way to write west's
// keys and keys outside the prefix.
func TestAClustersUserPublishesItsOwnKeysOnly(t *testing.T) {
	_, clients := brokerWithGrant(t)
	east := clients[ClusterUser("east")]
	p := &Publisher{cfg: Config{ClusterID: "east", Prefix: cs.DefaultPrefix, LeaseTTL: 5 * time.Second}, store: east,
		log: slog.New(slog.DiscardHandler)}
	id := cs.ExportID{Cluster: "east", ServiceName: cs.ServiceName{Namespace: "shop", Name: "db"}}
	held, err := p.claim(t.Context())
	if err != nil {
		t.Fatalf("east claiming its cluster key: %v", err)
	}
	for _, op := range []clientv3.Op{
		clientv3.OpPut(cs.ExportKey(cs.DefaultPrefix, id), `{"type":"Headless"}`, clientv3.WithLease(held.lease)),
		clientv3.OpPut(cs.ImportKey(cs.DefaultPrefix, id), `{"ips":["10.96.4.7"]}`, clientv3.WithLease(held.lease)),
		clientv3.OpDelete(cs.ImportKey(cs.DefaultPrefix, id)),
	} {
		if err := p.fenced(t.Context(), held, op); err != nil {
			t.Errorf("east's own fenced write: %v", err)
		}
	}
	if _, err := east.Get(t.Context(), cs.ReadRange(cs.DefaultPrefix).Key, clientv3.WithPrefix()); err != nil {
		t.Errorf("east listing the prefix: %v", err)
	}
	if _, err := east.KeepAliveOnce(t.Context(), held.lease); err != nil {
		t.Errorf("east renewing its lease: %v", err)
	}

	west := cs.ExportID{Cluster: "west", ServiceName: id.ServiceName}
	for _, key := range []string{cs.ClusterKey(cs.DefaultPrefix, "west"), cs.ExportKey(cs.DefaultPrefix, west), cs.ImportKey(cs.DefaultPrefix, west),
		"/clusterset/clusters/east2", "/clusterset/exports/east2/shop/db", "/clusterset/other", "/clusterset0", "/skydns/local/cluster/x"} {
		for _, write := range etcdtest.Writes(key) {
			if err := write.Do(t.Context(), east); !isPermissionDenied(err) {
				t.Errorf("east: %s %s: %v, want permission denied", write.Name, key, err)
			}
		}
	}
	thief := &Publisher{cfg: Config{ClusterID: "west", Prefix: cs.DefaultPrefix, LeaseTTL: 5 * time.Second}, store: east}
	if _, err := thief.claim(t.Context()); !isPermissionDenied(err) {
		t.Errorf("east claiming west's cluster key: %v, want permission denied", err)
	}
	if _, err := east.Revoke(t.Context(), held.lease); err != nil {
		t.Errorf("east revoking its own lease and the keys on it: %v", err)
	}
}

func TestTheReaderUserWritesNothing(t *testing.T) {
	etcd, clients := brokerWithGrant(t)
	etcd.Put(t, "/clusterset/exports/east/shop/db", `{"type":"Headless"}`)
	reader := clients[ReaderUser]
	if resp, err := reader.Get(t.Context(), "/clusterset/", clientv3.WithPrefix()); err != nil || resp.Count != 1 {
		t.Errorf("the reader listing the prefix: %v, %v", resp, err)
	}
	if err := etcdtest.WatchRangesErr(t.Context(), reader, "/clusterset/"); err != nil {
		t.Errorf("the reader: %v", err)
	}
	if err := etcdtest.WatchErr(t.Context(), reader, "/clusterset/", "/clusterset1"); !isPermissionDenied(err) {
		t.Errorf("the reader watching past the watches' ranges: %v, want permission denied", err)
	}
	if _, err := reader.Get(t.Context(), "/skydns/", clientv3.WithPrefix()); !isPermissionDenied(err) {
		t.Errorf("the reader reading outside the prefix: %v, want permission denied", err)
	}
	for _, key := range []string{"/clusterset/exports/east/shop/db", "/clusterset/clusters/east", "/clusterset/imports/west/shop/db"} {
		for _, write := range etcdtest.Writes(key) {
			if err := write.Do(t.Context(), reader); !isPermissionDenied(err) {
				t.Errorf("the reader: %s %s: %v, want permission denied", write.Name, key, err)
			}
		}
	}
}

// TestGrantRunTwiceChangesNothingAndTakesBackWhatARoleShouldNotHold runs
// the command line twice, with a permission added by hand in between.
func TestGrantRunTwiceChangesNothingAndTakesBackWhatARoleShouldNotHold(t *testing.T) {
	pki := etcdtest.NewPKI(t)
	etcd := etcdtest.StartSecure(t, pki, "root")
	cert := pki.Client(t, "root")
	args := append([]string{"grant", "--etcd-endpoints=" + etcd.ClientURL(), "--cluster-id=east", "--cluster-id=west", "--enable-auth"},
		pki.Flags(cert)...)
	first := runGrant(t, exitOK, args...)
	for _, want := range []string{"added user kube2sky-east", "added role clusterset-reader", "added user root", "enabled auth",
		"granted role kube2sky-west readwrite /clusterset/clusters/west"} {
		if !strings.Contains(first, want) {
			t.Errorf("the first run does not say %q:\n%s", want, first)
		}
	}
	if second := runGrant(t, exitOK, args...); !strings.HasPrefix(second, "nothing to change") {
		t.Errorf("the second run changed something:\n%s", second)
	}
	if _, err := etcd.Client.RoleGrantPermission(t.Context(), "kube2sky-east", "/clusterset/exports/west/", "/clusterset/exports/west0",
		clientv3.PermissionType(clientv3.PermReadWrite)); err != nil {
		t.Fatal(err)
	}
	if third := runGrant(t, exitOK, args...); !strings.Contains(third, `revoked from role kube2sky-east ["/clusterset/exports/west/"`) {
		t.Errorf("the run after a grant by hand does not take it back:\n%s", third)
	}
	role, err := etcd.Client.RoleGet(t.Context(), "kube2sky-east")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range role.Perm {
		got = append(got, p.PermType.String()+" "+string(p.Key)+" "+string(p.RangeEnd))
	}
	slices.Sort(got)
	want := []string{"READ /clusterset/ /clusterset0\x00\x00\x00\x00\x00\x00\x00", "READWRITE /clusterset/clusters/east ",
		"READWRITE /clusterset/exports/east/ /clusterset/exports/east0", "READWRITE /clusterset/imports/east/ /clusterset/imports/east0"}
	if !slices.Equal(got, want) {
		t.Errorf("kube2sky-east holds %q, want %q", got, want)
	}
}

func TestGrantRefusesWhatItCannotName(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"grant", "--etcd-endpoints=http://127.0.0.1:1", "--cluster-id=east", "--cluster-id=East_1"}, `--cluster-id: "East_1" is not a lower-case DNS label`},
		{[]string{"grant", "--etcd-endpoints=http://127.0.0.1:1", "--cluster-id=a.b"}, `--cluster-id: "a.b"`},
		{[]string{"grant", "--etcd-endpoints=http://127.0.0.1:1", "--prefix=clusterset"}, "--prefix"},
		{[]string{"grant", "--cluster-id=east"}, "--etcd-endpoints: required"},
		{[]string{"revoke", "--etcd-endpoints=http://127.0.0.1:1"}, "want clusterset grant"},
	} {
		var stderr bytes.Buffer
		if status := GrantMain("kubesky", "KUBESKY", c.args, new(bytes.Buffer), &stderr); status != exitBadArgs || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%q: status %d, %q; want %d saying %q", c.args, status, stderr.String(), exitBadArgs, c.want)
		}
	}
	// Grant itself checks too: a harness calling it gets the same error
	if err := Grant(context.Background(), nil, "/clusterset", []string{"-east"}, false); err == nil || !strings.Contains(err.Error(), "--cluster-id") {
		t.Errorf("Grant with a bad cluster ID: %v", err)
	}
}

func runGrant(t *testing.T, want int, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if status := GrantMain("kubesky", "KUBESKY", args, &stdout, &stderr); status != want {
		t.Fatalf("kubesky clusterset %q: status %d, want %d: %s", args, status, want, stderr.String())
	}
	return stdout.String()
}

func isPermissionDenied(err error) bool {
	return errors.Is(err, rpctypes.ErrPermissionDenied) || err != nil && strings.Contains(err.Error(), "permission denied")
}
