package integration

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/integration/harness"
)

// setUpRolesAsTheREADMEDoes runs deploy/README.md's commands for an etcd
// cluster of one's own: kube2sky added with a password by etcdctl, then
// `kubesky-demo etcd-auth` as root for the roles (kube2sky reads and writes
// the prefix, its records and, under /skydns/_kube2sky/, its leader
// election; skydns only reads it), the other users and auth.
func setUpRolesAsTheREADMEDoes(t *testing.T, etcd *harness.Etcd, pki *harness.EtcdPKI, root harness.ClientCert) {
	t.Helper()
	etcd.Ctl("user", "add", "kube2sky", "--new-user-password=kube2sky-secret")
	args := append([]string{"etcd-auth", "--etcd-endpoints=" + etcd.Endpoint, "--reader=skydns", "--kube-apiserver=false"}, pki.Flags(root)...)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, harness.Binary("kubesky-demo"), args...).CombinedOutput(); err != nil {
		t.Fatalf("kubesky-demo etcd-auth: %v\n%s", err, out)
	}
}

// TestEtcdTLSAndRBAC runs the pipeline against an etcd that requires TLS
// client certificates and has auth enabled: kube2sky authenticates with a
// password (over a client certificate), skydns with its certificate's
// common name, each holding only its role.
func TestEtcdTLSAndRBAC(t *testing.T) {
	harness.RequireBinaries(t, "kubesky-demo", "etcdctl")
	pki := harness.NewEtcdPKI(t)
	dnsEtcd := harness.StartSecureEtcd(t, pki, "root")
	setUpRolesAsTheREADMEDoes(t, dnsEtcd, pki, pki.Client(t, "root"))
	apiEtcd := harness.StartEtcd(t)
	api := harness.StartAPIServer(t, apiEtcd.Endpoint)
	kube2skyCert, skydnsCert := pki.Client(t, "kube2sky"), pki.Client(t, "skydns")
	kube2skyFlags := append(pki.Flags(kube2skyCert), "--etcd-username=kube2sky", "--etcd-password=kube2sky-secret")

	harness.StartKube2Sky(t, api.Kubeconfig, dnsEtcd.Endpoint, kube2skyFlags...)
	sky := harness.StartSkyDNS(t, dnsEtcd.Endpoint, pki.Flags(skydnsCert)...)

	t.Run("a Service reaches DNS through the authenticated etcd", func(t *testing.T) {
		ip := createService(t, api.Client, "default", "secure", "")
		expectWithin(t, sky.DNSAddr, 30*time.Second, aRecords(serviceName("default", "secure"), ip))
	})

	t.Run("skydns's user may read the prefix and write nothing", func(t *testing.T) {
		c := etcdClient(t, dnsEtcd.Endpoint, pki, skydnsCert, "", "")
		if _, err := c.Get(t.Context(), "/skydns/", clientv3.WithPrefix(), clientv3.WithCountOnly()); err != nil {
			t.Errorf("reading the prefix: %v", err)
		}
		wantPermissionDenied(t, "writing the prefix", put(t, c, "/skydns/local/cluster/svc/default/evil/x"))
		wantPermissionDenied(t, "reading outside the prefix", get(t, c, "/registry/"))
		requireStalledWatchesReopen(t, c)
	})

	t.Run("kube2sky's user may write the prefix and nothing else", func(t *testing.T) {
		c := etcdClient(t, dnsEtcd.Endpoint, pki, kube2skyCert, "kube2sky", "kube2sky-secret")
		if err := put(t, c, "/skydns/local/cluster/by-hand"); err != nil {
			t.Errorf("writing the prefix: %v", err)
		}
		wantPermissionDenied(t, "writing outside the prefix", put(t, c, "/other/key"))
		wantPermissionDenied(t, "reading outside the prefix", get(t, c, "/other/"))
		requireStalledWatchesReopen(t, c)
	})

	badCert := harness.NewEtcdPKI(t).Client(t, "skydns") // signed by a CA etcd does not trust
	failures := []struct {
		name    string
		flags   []string
		wantErr string
	}{
		{"a wrong password", append(pki.Flags(kube2skyCert), "--etcd-username=kube2sky", "--etcd-password=wrong"),
			"authentication failed"},
		{"an unknown user", append(pki.Flags(kube2skyCert), "--etcd-username=nobody", "--etcd-password=x"),
			"authentication failed"},
		{"a client certificate from another CA", pki.Flags(badCert),
			"certificate"},
		{"a CA that did not sign etcd's certificate", []string{"--etcd-cafile=" + harness.NewEtcdPKI(t).CAFile, "--etcd-certfile=" + skydnsCert.CertFile, "--etcd-keyfile=" + skydnsCert.KeyFile},
			"certificate"},
	}
	for _, f := range failures {
		t.Run("skydns with "+f.name+" exits at once, saying why", func(t *testing.T) {
			runToExit(t, f.wantErr, "skydns", append([]string{
				"--dns-addr=" + harness.HostPort(harness.FreePort(t)), "--http-addr=" + harness.HostPort(harness.FreePort(t)),
				"--etcd-endpoints=" + dnsEtcd.Endpoint}, f.flags...)...)
		})
		t.Run("kube2sky with "+f.name+" exits at once, saying why", func(t *testing.T) {
			runToExit(t, f.wantErr, "kube2sky", append([]string{
				"--kubeconfig=" + api.Kubeconfig, "--http-addr=" + harness.HostPort(harness.FreePort(t)),
				"--etcd-endpoints=" + dnsEtcd.Endpoint}, f.flags...)...)
		})
	}
}

// exitWithin is how soon a daemon with credentials etcd rejects must exit:
// the etcd dial timeout (5 s by default) and some slack for a loaded machine.
const exitWithin = 8 * time.Second

// runToExit runs bin/name with args and checks that it fails within
// exitWithin with wantErr in its output.
func runToExit(t *testing.T, wantErr, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*exitWithin)
	defer cancel()
	start := time.Now()
	out, err := exec.CommandContext(ctx, harness.Binary(name), args...).CombinedOutput()
	took := time.Since(start)
	if err == nil || ctx.Err() != nil {
		t.Fatalf("%s: %v after %v, want a failure within %v\n%s", name, err, took, exitWithin, out)
	}
	if took > exitWithin {
		t.Errorf("%s took %v to fail, want at most %v", name, took, exitWithin)
	}
	line := lastLine(string(out))
	if !strings.Contains(line, wantErr) {
		t.Errorf("%s's last words %q do not say %q\n%s", name, line, wantErr, out)
	}
	t.Logf("%s failed after %v: %s", name, took.Round(time.Millisecond), line)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func etcdClient(t *testing.T, endpoint string, pki *harness.EtcdPKI, cert harness.ClientCert, user, password string) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{
		Endpoints: []string{endpoint}, TLS: pki.TLSConfig(t, cert), Username: user, Password: password,
		DialTimeout: 5 * time.Second, Logger: zap.NewNop(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func put(t *testing.T, c *clientv3.Client, key string) error {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err := c.Put(ctx, key, `{"host":"192.0.2.1"}`)
	return err
}

func get(t *testing.T, c *clientv3.Client, prefix string) error {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err := c.Get(ctx, prefix, clientv3.WithPrefix())
	return err
}

// requireStalledWatchesReopen checks that c may watch /skydns/ over each
// range a ListWatcher opens its watch with after a stall, and may write
// nothing past the prefix on the way.
func requireStalledWatchesReopen(t *testing.T, c *clientv3.Client) {
	t.Helper()
	if err := etcdtest.WatchRangesErr(t.Context(), c, "/skydns/"); err != nil {
		t.Error(err)
	}
	wantPermissionDenied(t, "writing the prefix's end", put(t, c, clientv3.GetPrefixRangeEnd("/skydns/")))
}

func wantPermissionDenied(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, rpctypes.ErrPermissionDenied) && (err == nil || !strings.Contains(err.Error(), "permission denied")) {
		t.Errorf("%s: %v, want permission denied", what, err)
	}
}
