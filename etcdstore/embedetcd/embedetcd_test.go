package embedetcd_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kubesky/kubesky/etcdstore/embedetcd"
	"github.com/kubesky/kubesky/etcdstore/etcdtest"
)

func TestEmbeddedEtcdKeepsDataAcrossRestarts(t *testing.T) {
	srv := etcdtest.Start(t)
	srv.Put(t, "/skydns/local/cluster/x", `{"host":"10.0.0.1"}`)
	url := srv.ClientURL()
	srv.Restart(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := srv.Client.Get(ctx, "/skydns/local/cluster/x")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("after restart: %v, %v", resp, err)
	}
}

func TestEmbeddedEtcdRejectsBadConfig(t *testing.T) {
	cases := map[string]embedetcd.Config{
		"no data dir":    {ClientURL: "http://127.0.0.1:0"},
		"a bare address": {DataDir: t.TempDir(), ClientURL: "127.0.0.1:2379"},
		"a bad peer URL": {DataDir: t.TempDir(), ClientURL: "http://127.0.0.1:0", PeerURL: "ftp://x"},
	}
	for name, cfg := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := embedetcd.Start(cfg); err == nil {
				t.Fatal("want an error")
			}
		})
	}
}

func TestEmbeddedEtcdFailsClearlyWhenThePortIsTaken(t *testing.T) {
	srv := etcdtest.Start(t)
	_, err := embedetcd.Start(embedetcd.Config{DataDir: t.TempDir(), ClientURL: srv.ClientURL()})
	if err == nil || !strings.Contains(err.Error(), "embedded etcd") {
		t.Fatalf("second server on the same port: %v", err)
	}
}
