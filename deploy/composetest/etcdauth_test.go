package composetest

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kubesky/kubesky/etcdstore"
	"github.com/kubesky/kubesky/etcdstore/etcdtest"
)

// etcdPorts are the host ports of docker-compose.ha.yml's etcd members.
var etcdPorts = []string{"KUBESKY_ETCD1_PORT", "KUBESKY_ETCD2_PORT", "KUBESKY_ETCD3_PORT"}

// etcdCreds are the stack's etcd CA and client certificates, copied out
// of the pki volume, for clients on the host (whose published ports the
// members' certificates name as 127.0.0.1).
type etcdCreds struct {
	dir       string
	endpoints []string
}

// copyEtcdCreds copies the CA and the client certificates of users from
// the etcd-auth container (which mounts the pki volume).
func copyEtcdCreds(t *testing.T, s *stack, users ...string) etcdCreds {
	t.Helper()
	c := etcdCreds{dir: t.TempDir()}
	s.copyFrom("etcd-auth", "/pki/etcd/ca.crt", c.dir)
	for _, user := range users {
		s.copyFrom("etcd-auth", "/pki/etcd/client-"+user+".crt", c.dir)
		s.copyFrom("etcd-auth", "/pki/etcd/client-"+user+".key", c.dir)
	}
	for _, port := range etcdPorts {
		c.endpoints = append(c.endpoints, "https://"+s.addr(port))
	}
	return c
}

// options are the client options of user, with its certificate.
func (c etcdCreds) options(user string) etcdstore.ClientOptions {
	o := etcdstore.DefaultClientOptions()
	o.Endpoints = c.endpoints
	o.CAFile = filepath.Join(c.dir, "ca.crt")
	o.CertFile = filepath.Join(c.dir, "client-"+user+".crt")
	o.KeyFile = filepath.Join(c.dir, "client-"+user+".key")
	return o
}

// client connects as user.
func (c etcdCreds) client(t *testing.T, user string) *clientv3.Client {
	t.Helper()
	client, err := c.options(user).New(nil)
	if err != nil {
		t.Fatalf("etcd client as %s: %v", user, err)
	}
	t.Cleanup(func() { client.Close() })
	return client
}

// checkLeastPrivilege checks, against the running stack, that each etcd
// user holds its role of deploy/README.md and no more.
func checkLeastPrivilege(t *testing.T, creds etcdCreds) {
	t.Run("skydns's user reads the records and writes nothing", func(t *testing.T) {
		c := creds.client(t, "skydns")
		if n, err := countKeys(t, c, "/skydns/"); err != nil || n == 0 {
			t.Errorf("reading /skydns/: %d keys, %v", n, err)
		}
		wantDenied(t, "writing a record", putKey(t, c, "/skydns/local/cluster/svc/default/evil/x"))
		wantDenied(t, "deleting the records", deleteKeys(t, c, "/skydns/"))
		wantDenied(t, "reading the API server's keys", firstErr(countKeys(t, c, "/registry/")))
		if err := etcdtest.WatchRangesErr(t.Context(), c, "/skydns/"); err != nil {
			t.Errorf("a watch opened again after a stall: %v", err)
		}
	})
	t.Run("kube2sky's user writes nothing outside /skydns/", func(t *testing.T) {
		c := creds.client(t, "kube2sky")
		if n, err := countKeys(t, c, "/skydns/_kube2sky/leader/"); err != nil || n == 0 {
			t.Errorf("reading its election keys: %d keys, %v", n, err)
		}
		wantDenied(t, "writing the API server's keys", putKey(t, c, "/registry/services/specs/default/evil"))
		wantDenied(t, "writing a key beside the prefix", putKey(t, c, "/skydnsx"))
		wantDenied(t, "reading the API server's keys", firstErr(countKeys(t, c, "/registry/")))
	})
	t.Run("the API server's user cannot touch the records", func(t *testing.T) {
		c := creds.client(t, "kube-apiserver")
		wantDenied(t, "writing a record", putKey(t, c, "/skydns/local/cluster/svc/default/evil/x"))
	})
}

// failFastWithin bounds how long a daemon given credentials etcd rejects
// may run, from its first log line to its last: its 5 s dial timeout and
// some slack. runWithin bounds the whole `compose run`, whose container
// creation and removal take seconds of their own with docker-compose v1.
const (
	failFastWithin = 8 * time.Second
	runWithin      = time.Minute
)

func checkBadCredentialsFailFast(t *testing.T, s *stack) {
	skydnsTLS := []string{"--dns-addr=0.0.0.0:1053", "--http-addr=0.0.0.0:8081",
		"--etcd-endpoints=https://etcd2:2379,https://etcd3:2379", "--etcd-cafile=/pki/etcd/ca.crt"}
	kube2skyTLS := []string{"--kubeconfig=/pki/kubeconfig", "--http-addr=0.0.0.0:8082",
		"--etcd-endpoints=https://etcd2:2379,https://etcd3:2379", "--etcd-cafile=/pki/etcd/ca.crt"}
	for _, c := range []struct {
		name, service string
		args          []string
		want          string
	}{
		{"skydns with a certificate from another CA (the API server's)", "skydns-2",
			append(skydnsTLS, "--etcd-certfile=/pki/apiserver.crt", "--etcd-keyfile=/pki/apiserver.key"), "refused the TLS handshake"},
		{"kube2sky with a wrong password", "kube2sky-2",
			append(kube2skyTLS, "--etcd-certfile=/pki/etcd/client-kube2sky.crt", "--etcd-keyfile=/pki/etcd/client-kube2sky.key",
				"--etcd-username=kube2sky", "--etcd-password=wrong"), "authentication failed"},
		{"kube2sky with skydns's certificate and no CA for etcd", "kube2sky-2",
			[]string{"--kubeconfig=/pki/kubeconfig", "--http-addr=0.0.0.0:8082", "--etcd-endpoints=https://etcd2:2379",
				"--etcd-certfile=/pki/etcd/client-skydns.crt", "--etcd-keyfile=/pki/etcd/client-skydns.key"}, "certificate"},
	} {
		t.Run(c.name+" exits at once, saying why", func(t *testing.T) {
			start := time.Now()
			out, err := s.exec(append(s.compose[1:], append([]string{"-p", s.project, "-f", s.file,
				"run", "--rm", "--no-deps", "-T", c.service}, c.args...)...)...)
			if err == nil {
				t.Fatalf("%s ran without error:\n%s", c.service, out)
			}
			if took := time.Since(start); took > runWithin {
				t.Errorf("compose run took %v, want at most %v", took, runWithin)
			}
			ran, last := daemonLog(t, out)
			if ran > failFastWithin {
				t.Errorf("%s ran %v before failing, want at most %v", c.service, ran, failFastWithin)
			}
			if !strings.Contains(last, c.want) {
				t.Errorf("last log line %q does not say %q\n%s", last, c.want, out)
			}
			t.Logf("failed %v after its first log line: %s", ran.Round(time.Millisecond), last)
		})
	}
}

// daemonLog returns, from a daemon's output among compose's own lines, how
// long it ran from its first log line to its last, and its last line.
func daemonLog(t *testing.T, out string) (time.Duration, string) {
	t.Helper()
	var times []time.Time
	var last string
	for _, line := range strings.Split(out, "\n") {
		stamp, ok := strings.CutPrefix(line, "time=")
		if !ok {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, strings.Fields(stamp)[0])
		if err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		times, last = append(times, at), line
	}
	if len(times) == 0 {
		t.Fatalf("no log line in:\n%s", out)
	}
	return times[len(times)-1].Sub(times[0]), last
}

func countKeys(t *testing.T, c *clientv3.Client, prefix string) (int64, error) {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	resp, err := c.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return 0, err
	}
	return resp.Count, nil
}

func putKey(t *testing.T, c *clientv3.Client, key string) error {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err := c.Put(ctx, key, `{"host":"192.0.2.66"}`)
	return err
}

func deleteKeys(t *testing.T, c *clientv3.Client, prefix string) error {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err := c.Delete(ctx, prefix, clientv3.WithPrefix())
	return err
}

func firstErr(_ int64, err error) error { return err }

func wantDenied(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, rpctypes.ErrPermissionDenied) {
		t.Errorf("%s: %v, want permission denied", what, err)
	}
}
