package explain

import (
	"net"
	"strings"
	"testing"

	"github.com/kubesky/kubesky/etcdstore/etcdtest"
)

// runMain runs the command line and returns its status and output.
func runMain(args ...string) (int, string, string) {
	var stdout, stderr strings.Builder
	code := Main("kubesky", args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// closedPort is a 127.0.0.1 address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestBadInputExitsWithStatus2AndSaysWhy(t *testing.T) {
	etcd := "--etcd-endpoints=http://127.0.0.1:2379"
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no command", nil, "kubesky: want a command: explain NAME [TYPE]"},
		{"an unknown command", []string{"explian", "web"}, `kubesky: unknown command "explian"`},
		{"no name", []string{"explain", etcd}, "kubesky: want NAME [TYPE], got 0 arguments"},
		{"a bad name", []string{"explain", "web..default", etcd}, `kubesky: bad name "web..default": empty label`},
		{"an unknown type", []string{"explain", "web.default.svc.cluster.local", "AX", etcd}, `kubesky: unknown type "AX"`},
		{"no etcd", []string{"explain", "web.default.svc.cluster.local"}, "--etcd-endpoints: required"},
		{"a bad etcd endpoint", []string{"explain", "web.default.svc.cluster.local", "--etcd-endpoints=127.0.0.1:2379"}, "--etcd-endpoints"},
		{"a bad replica", []string{"explain", "web", etcd, "--dns=127.0.0.1:1053,metrics=1"}, "--dns"},
		{"an unknown flag", []string{"explain", "web", etcd, "--dig"}, "unknown flag: --dig"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runMain(c.args...)
			if code != 2 || stdout != "" || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
				t.Fatalf("status %d, stdout %q, stderr %q; want 2 and one line with %q", code, stdout, stderr, c.want)
			}
		})
	}
}

func TestHelpAndVersionExit0(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"explain", "--help"}, {"--version"}} {
		code, stdout, _ := runMain(args...)
		if code != 0 || !strings.Contains(stdout, "kubesky") {
			t.Errorf("%v: status %d, stdout %q", args, code, stdout)
		}
	}
}

func TestUnreachableEtcdExitsWithStatus1(t *testing.T) {
	endpoint := "http://" + closedPort(t)
	code, stdout, stderr := runMain("explain", "web.default.svc.cluster.local", "--etcd-endpoints="+endpoint,
		"--timeout=500ms", "--etcd-dial-timeout=500ms")
	want := "kubesky: etcd unreachable: no answer within 500ms (--etcd-endpoints=" + endpoint + ")\n"
	if code != 1 || stdout != "" || stderr != want {
		t.Fatalf("status %d, stdout %q, stderr %q; want 1 and %q", code, stdout, stderr, want)
	}
}

func TestAnUnreadableKubeconfigExitsWithStatus1(t *testing.T) {
	code, _, stderr := runMain("explain", "web.default.svc.cluster.local", "--etcd-endpoints=http://"+closedPort(t),
		"--kubeconfig=/nonexistent/kubeconfig")
	if code != 1 || !strings.Contains(stderr, "--kubeconfig") {
		t.Fatalf("status %d, stderr %q; want 1 naming --kubeconfig", code, stderr)
	}
}

func TestExplainWithoutKubernetes(t *testing.T) {
	etcd := etcdtest.Start(t)
	etcd.Put(t, "/skydns/local/cluster/svc/default/hand/x1", `{"host":"10.0.0.1"}`)
	etcd.Put(t, "/skydns/local/cluster/dns-version", `{"text":"1.1.0","ttl":30,"owner":"kube2sky.cluster.local"}`)
	etcd.Put(t, "/skydns/local/cluster/svc/default/web/1a2b3c4d", `{"host":"10.96.0.10","ttl":30,"owner":"kube2sky.cluster.local"}`)
	run := func(t *testing.T, args ...string) string {
		t.Helper()
		code, stdout, stderr := runMain(append([]string{"explain", "--etcd-endpoints=" + etcd.ClientURL()}, args...)...)
		if code != 0 || stderr != "" {
			t.Fatalf("status %d, stderr %q", code, stderr)
		}
		return stdout
	}
	t.Run("a key added by hand has no owner and stands for no object", func(t *testing.T) {
		out := run(t, "hand.default.svc.cluster.local")
		for _, want := range []string{"1 key at and below /skydns/local/cluster/svc/default/hand\n", "no owner: added by hand",
			"Service default/hand: not fetched (no --kubeconfig), 0 keys", "replicas: none given"} {
			if !strings.Contains(out, want) {
				t.Errorf("report:\n%s\nwant %q", out, want)
			}
		}
	})
	t.Run("the zone's dns-version is checked against the builder without Kubernetes", func(t *testing.T) {
		out := run(t, "dns-version.cluster.local", "TXT")
		if !strings.Contains(out, "Zone cluster.local.\n      in sync: etcd holds the 1 record the builder gives") {
			t.Errorf("report:\n%s\nwant the zone in sync", out)
		}
	})
	t.Run("a TTL other than kube2sky's is drift", func(t *testing.T) {
		out := run(t, "dns-version.cluster.local", "TXT", "--ttl=60")
		if !strings.Contains(out, "DRIFT: 0 same, 0 missing, 0 extra, 1 changed") {
			t.Errorf("report:\n%s\nwant the dns-version changed", out)
		}
	})
	t.Run("the namespace name shows every key below it", func(t *testing.T) {
		out := run(t, "default.svc.cluster.local")
		if !strings.Contains(out, "2 keys at and below /skydns/local/cluster/svc/default\n") {
			t.Errorf("report:\n%s\nwant 2 keys", out)
		}
	})
	t.Run("a wildcard label matches any one label, as skydns matches it", func(t *testing.T) {
		out := run(t, "*.default.svc.cluster.local")
		if !strings.Contains(out, "2 keys at and below /skydns/local/cluster/svc/default/*\n") {
			t.Errorf("report:\n%s\nwant the 2 keys of hand and web", out)
		}
		out = run(t, "web.any.svc.cluster.local")
		if !strings.Contains(out, "1 key at and below /skydns/local/cluster/svc/any/web\n") {
			t.Errorf("report:\n%s\nwant web's key", out)
		}
	})
	t.Run("--max-keys bounds the keys and says so", func(t *testing.T) {
		out := run(t, "cluster.local", "--max-keys=1")
		if !strings.Contains(out, "1 key at and below") || !strings.Contains(out, "more keys below the name") {
			t.Errorf("report:\n%s\nwant 1 key and more", out)
		}
	})
}

// kubesky and kubectl kubesky run `corefile check` through Main.
func TestCorefileCheckRunsThroughMain(t *testing.T) {
	for _, prog := range []string{"kubesky", "kubectl kubesky"} {
		var stdout, stderr strings.Builder
		code := Main(prog, []string{"corefile", "check", "../corefile/testdata/kubeadm.Corefile"}, &stdout, &stderr)
		if code != 0 || !strings.Contains(stdout.String(), "usable as is") {
			t.Errorf("%s corefile check: status %d, stdout %q, stderr %q", prog, code, stdout.String(), stderr.String())
		}
		code = Main(prog, []string{"corefile", "check"}, &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), prog+": want corefile check FILE") {
			t.Errorf("%s corefile check without a file: status %d, stderr %q", prog, code, stderr.String())
		}
		stderr.Reset()
		code = Main(prog, []string{"corefile", "check", "--kubeconfig=/nonexistent/kubeconfig"}, &stdout, &stderr)
		if code != 1 || !strings.HasPrefix(stderr.String(), prog+": --kubeconfig: ") {
			t.Errorf("%s corefile check with an unreadable kubeconfig: status %d, stderr %q", prog, code, stderr.String())
		}
	}
}

// kubesky and kubectl kubesky run `clusterset grant` through Main.
func TestClustersetGrantRunsThroughMain(t *testing.T) {
	for _, prog := range []string{"kubesky", "kubectl kubesky"} {
		var stdout, stderr strings.Builder
		if code := Main(prog, []string{"clusterset", "--help"}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "kube2sky-<ID>") {
			t.Errorf("%s clusterset --help: status %d, stdout %q", prog, code, stdout.String())
		}
		code := Main(prog, []string{"clusterset", "grant", "--etcd-endpoints=http://127.0.0.1:1", "--cluster-id=East"}, &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), prog+" clusterset grant: --cluster-id: \"East\"") {
			t.Errorf("%s clusterset grant with a bad cluster ID: status %d, stderr %q", prog, code, stderr.String())
		}
	}
}
