package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func runMain(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	code := dispatch(ctx, cancel, args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestDispatch(t *testing.T) {
	t.Run("help lists the commands", func(t *testing.T) {
		code, out, _ := runMain(t, "help")
		if code != 0 || !strings.Contains(out, "apply") || !strings.Contains(out, "show") {
			t.Fatalf("code %d, %q", code, out)
		}
	})
	t.Run("an unknown command exits 2", func(t *testing.T) {
		code, _, errOut := runMain(t, "frobnicate")
		if code != 2 || !strings.Contains(errOut, `unknown command "frobnicate"`) {
			t.Fatalf("code %d, %q", code, errOut)
		}
	})
	t.Run("a command's --help lists its flags and exits 0", func(t *testing.T) {
		code, out, _ := runMain(t, "show", "--help")
		if code != 0 || !strings.Contains(out, "--etcd-endpoints") {
			t.Fatalf("code %d, %q", code, out)
		}
	})
	t.Run("flags without a command run the demo", func(t *testing.T) {
		code, _, errOut := runMain(t, "--start-timeout=0s")
		if code != 2 || !strings.Contains(errOut, "--start-timeout must be positive") {
			t.Fatalf("code %d, %q", code, errOut)
		}
	})
	t.Run("a bad flag exits 2", func(t *testing.T) {
		code, _, errOut := runMain(t, "apply", "--nope")
		if code != 2 || !strings.Contains(errOut, "unknown flag: --nope") {
			t.Fatalf("code %d, %q", code, errOut)
		}
	})
	t.Run("stray arguments exit 2", func(t *testing.T) {
		code, _, errOut := runMain(t, "show", "extra")
		if code != 2 || !strings.Contains(errOut, "unexpected arguments") {
			t.Fatalf("code %d, %q", code, errOut)
		}
	})
}

func TestRunNamesMissingBinaries(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "skydns"), []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "etcd"), []byte("not executable"), 0o644)
	code, _, errOut := runMain(t, "run", "--bin-dir", dir, "--data-dir", t.TempDir())
	if code != 2 || !strings.Contains(errOut, "lacks etcd, kube-apiserver, kube2sky: run `make demo`") {
		t.Fatalf("code %d, %q", code, errOut)
	}
}

func TestGuideUsesTheConfiguredAddresses(t *testing.T) {
	c := defaultRunConfig()
	c.dnsAddr, c.skydnsEtcdAddr, c.binDir = "127.0.0.1:5353", "127.0.0.1:12379", "/opt/kubesky"
	g := guide(c, c.paths())
	for _, want := range []string{
		"dig @127.0.0.1 -p 5353 web.default.svc.cluster.local",
		"/opt/kubesky/etcdctl --endpoints http://127.0.0.1:12379 put /skydns/local/cluster/svc/default/hand/x1",
		"/opt/kubesky/kubesky-demo apply --kubeconfig " + filepath.Join("data", "demo", "pki", "kubeconfig") + " -f " + filepath.Join("data", "demo", "api-service.yaml"),
	} {
		if !strings.Contains(g, want) {
			t.Errorf("guide lacks %q:\n%s", want, g)
		}
	}
}

func TestTheDemosSkyDNSStopsWithoutALameduck(t *testing.T) {
	c := defaultRunConfig()
	args := c.skydns(c.paths()).args
	if !slices.Contains(args, "--lameduck=0s") {
		t.Fatalf("skydns args %v: Ctrl-C would wait for the 5s lameduck no Service needs", args)
	}
}

func TestRunRefusesPortsInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	code, _, errOut := runMain(t, "run", "--dns-addr", l.Addr().String(), "--data-dir", t.TempDir())
	if code != 2 || !strings.Contains(errOut, "--dns-addr "+l.Addr().String()) || !strings.Contains(errOut, "in use") {
		t.Fatalf("code %d, %q", code, errOut)
	}
}
