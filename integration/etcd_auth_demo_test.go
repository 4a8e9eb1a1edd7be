package integration

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/kubesky/kubesky/integration/harness"
)

// TestDemoEtcdAuth runs `kubesky-demo etcd-auth`, what the compose HA
// stack runs once, against an etcd that requires client certificates:
// twice (it must be idempotent, the second time with auth already on),
// then checks that each user holds its role of deploy/README.md and no
// more.
func TestDemoEtcdAuth(t *testing.T) {
	harness.RequireBinaries(t, "kubesky-demo", "etcd")
	pki := harness.NewEtcdPKI(t)
	etcd := harness.StartSecureEtcd(t, pki, "root")
	root := pki.Client(t, "root")
	args := append([]string{"etcd-auth", "--etcd-endpoints=" + etcd.Endpoint}, pki.Flags(root)...)
	for _, run := range []string{"first", "second"} {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		out, err := exec.CommandContext(ctx, harness.Binary("kubesky-demo"), args...).CombinedOutput()
		cancel()
		if err != nil || !strings.Contains(string(out), "etcd auth enabled") {
			t.Fatalf("%s run: %v\n%s", run, err, out)
		}
	}
	t.Run("run as another user once auth is on, it says it needs root", func(t *testing.T) {
		skydns := pki.Client(t, "skydns")
		args := append([]string{"etcd-auth", "--etcd-endpoints=" + etcd.Endpoint}, pki.Flags(skydns)...)
		out, err := exec.CommandContext(t.Context(), harness.Binary("kubesky-demo"), args...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "permission denied (auth is on: --etcd-certfile must be root's client certificate)") {
			t.Fatalf("%v\n%s", err, out)
		}
	})
	rootClient := etcdClient(t, etcd.Endpoint, pki, root, "", "")
	if status, err := rootClient.AuthStatus(t.Context()); err != nil || !status.Enabled {
		t.Fatalf("auth status %+v, %v", status, err)
	}

	t.Run("skydns reads the prefix and writes nothing", func(t *testing.T) {
		c := etcdClient(t, etcd.Endpoint, pki, pki.Client(t, "skydns"), "", "")
		if err := get(t, c, "/skydns/"); err != nil {
			t.Errorf("reading the prefix: %v", err)
		}
		wantPermissionDenied(t, "writing the prefix", put(t, c, "/skydns/local/cluster/x"))
		wantPermissionDenied(t, "reading the API server's keys", get(t, c, "/registry/"))
		requireStalledWatchesReopen(t, c)
	})
	t.Run("kube2sky writes the prefix and its election key, nothing else", func(t *testing.T) {
		c := etcdClient(t, etcd.Endpoint, pki, pki.Client(t, "kube2sky"), "", "")
		for _, key := range []string{"/skydns/local/cluster/x", "/skydns/_kube2sky/leader/kube2sky/1"} {
			if err := put(t, c, key); err != nil {
				t.Errorf("writing %s: %v", key, err)
			}
		}
		wantPermissionDenied(t, "writing outside the prefix", put(t, c, "/registry/x"))
		wantPermissionDenied(t, "writing a key that only starts like the prefix", put(t, c, "/skydnsx"))
		requireStalledWatchesReopen(t, c)
	})
	t.Run("the API server writes /registry/ and its compaction key, not the records", func(t *testing.T) {
		c := etcdClient(t, etcd.Endpoint, pki, pki.Client(t, "kube-apiserver"), "", "")
		for _, key := range []string{"/registry/services/x", "compact_rev_key"} {
			if err := put(t, c, key); err != nil {
				t.Errorf("writing %s: %v", key, err)
			}
		}
		wantPermissionDenied(t, "writing the records", put(t, c, "/skydns/local/cluster/x"))
	})
	t.Run("a certificate for a user etcd does not know gets nothing", func(t *testing.T) {
		c := etcdClient(t, etcd.Endpoint, pki, pki.Client(t, "nobody"), "", "")
		err := get(t, c, "/skydns/")
		if err == nil || !strings.Contains(err.Error(), "user name not found") && !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("reading as nobody: %v", err)
		}
	})
}
