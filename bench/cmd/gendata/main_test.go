package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kubesky/kubesky/etcdstore/etcdtest"
)

func TestWritesTheFilesAndLoadsEtcd(t *testing.T) {
	srv := etcdtest.Start(t)
	dir := t.TempDir()
	hosts, queries := filepath.Join(dir, "hosts"), filepath.Join(dir, "queries")
	var stdout, stderr strings.Builder
	code := run([]string{"--services", "50", "--etcd-endpoints", srv.ClientURL(), "--hosts", hosts, "--queries", queries, "--query-count", "20"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "services 50, keys 100") || !strings.Contains(stdout.String(), "loaded into etcd") {
		t.Errorf("stdout %q", stdout.String())
	}
	if lines := countLines(t, hosts); lines != 50 {
		t.Errorf("hosts file has %d lines", lines)
	}
	if lines := countLines(t, queries); lines != 20 {
		t.Errorf("query file has %d lines", lines)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	resp, err := srv.Client.Get(ctx, "/skydns/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil || resp.Count != 100 {
		t.Fatalf("etcd holds %v keys (%v)", resp, err)
	}
}

func TestBadFlagsExitTwo(t *testing.T) {
	for _, args := range [][]string{{"--services", "0"}, {"--query-count", "0"}, {"--nope"}} {
		var stdout, stderr strings.Builder
		if code := run(args, &stdout, &stderr); code != 2 || stderr.Len() == 0 {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr.String())
		}
	}
}

func TestAnUnwritableFileFails(t *testing.T) {
	var stdout, stderr strings.Builder
	if code := run([]string{"--services", "5", "--hosts", "/nonexistent/dir/hosts"}, &stdout, &stderr); code != 1 {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
}

func countLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}
