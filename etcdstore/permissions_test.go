package etcdstore_test

import (
	"fmt"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/authpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kubesky/kubesky/etcdstore"
	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/polltest"
)

// TestAUserHoldingPrefixPermissionsFollowsEveryWatchOpenedAfterAStall
// runs a ListWatcher as a user whose role holds only PrefixPermissions,
// read or readwrite, and silences its watch seven times: each time it
// takes the watch as stalled and opens it again over the next, wider
// range (WatchEnds), and the change made meanwhile arrives through it, up
// to the widest range.
func TestAUserHoldingPrefixPermissionsFollowsEveryWatchOpenedAfterAStall(t *testing.T) {
	for _, perm := range []clientv3.PermissionType{clientv3.PermissionType(clientv3.PermRead), clientv3.PermissionType(clientv3.PermReadWrite)} {
		t.Run(authpb.Permission_Type(perm).String(), func(t *testing.T) {
			t.Parallel()
			pki := etcdtest.NewPKI(t)
			srv := etcdtest.StartSecureWithProgressNotify(t, pki, "root", 100*time.Millisecond)
			srv.Put(t, "/skydns/a", "0")
			addUser(t, srv.Client, "root", "root")
			grantRole(t, srv.Client, "user", etcdstore.PrefixPermissions("/skydns/", perm))
			addUser(t, srv.Client, "user", "user")
			if _, err := srv.Client.AuthEnable(t.Context()); err != nil {
				t.Fatal(err)
			}
			src := etcdtest.NewMutingSource(etcdtest.NewClientWith(t, pki.Options(srv.ClientURL(), pki.Client(t, "user"))))
			followStalls(t, srv, src)
		})
	}
}

// followStalls runs a ListWatcher of /skydns/ over src, mutes its watch
// once for each range it takes turns with after the first, and checks
// that the change made meanwhile arrives each time.
func followStalls(t *testing.T, srv *etcdtest.Server, src *etcdtest.MutingSource) {
	t.Helper()
	rec := &recorder{}
	runListWatcher(t, &etcdstore.ListWatcher{Source: src, Prefix: "/skydns/", ProbeInterval: 100 * time.Millisecond,
		StallAfter: 500 * time.Millisecond, RequestTimeout: time.Second, OnUpdate: rec.onUpdate, OnState: rec.onState})
	polltest.True(t, "sync", func() bool { _, s, _ := rec.snapshot(); return s.Synced })
	srv.Put(t, "/other/key", "moves etcd's revision to the watch's start")
	awaitProgressNotifications(t, rec)
	for stall := 1; stall < len(etcdstore.WatchEnds("/skydns/")); stall++ {
		src.Mute()
		want := fmt.Sprint(stall)
		srv.Put(t, "/skydns/a", want)
		polltest.True(t, fmt.Sprintf("the change made during stall %d", stall), func() bool { v, _ := rec.get("/skydns/a"); return v == want })
	}
}

// grantRole adds role holding perms.
func grantRole(t *testing.T, c *clientv3.Client, role string, perms []etcdstore.Permission) {
	t.Helper()
	if _, err := c.RoleAdd(t.Context(), role); err != nil {
		t.Fatal(err)
	}
	for _, p := range perms {
		if _, err := c.RoleGrantPermission(t.Context(), role, p.Key, p.End, p.Type); err != nil {
			t.Fatal(err)
		}
	}
}

// addUser adds user, without a password (its certificate names it),
// holding role.
func addUser(t *testing.T, c *clientv3.Client, user, role string) {
	t.Helper()
	if _, err := c.UserAddWithOptions(t.Context(), user, "", &clientv3.UserAddOptions{NoPassword: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UserGrantRole(t.Context(), user, role); err != nil {
		t.Fatal(err)
	}
}
