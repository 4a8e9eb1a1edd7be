package skydns

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/etcdstore/embedetcd"
	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/dnstest"
	"github.com/kubesky/kubesky/internal/polltest"
)

func TestEmbeddedEtcd(t *testing.T) {
	cfg := testConfig("")
	cfg.Etcd.Endpoints = nil
	cfg.EtcdDataDir = filepath.Join(t.TempDir(), "etcd")
	cfg.EmbeddedEtcdAddr = "127.0.0.1:0"
	d := startDaemon(t, cfg)
	client := etcdtest.NewClient(t, d.EtcdURL())

	t.Run("records put into the embedded etcd are served", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		if _, err := client.Put(ctx, contract.Key(cfg.Prefix, web)+"/a1", `{"host":"10.96.0.10"}`); err != nil {
			t.Fatal(err)
		}
		polltest.NoComplaint(t, "answer", func() string {
			return answerIs(dnstest.Ask(t, "udp", d.DNSAddr(), web, dns.TypeA), dns.RcodeSuccess, "10.96.0.10")
		})
	})
	t.Run("stopping the daemon stops the embedded etcd and frees its data dir", func(t *testing.T) {
		if err := d.Stop(t.Context()); err != nil {
			t.Fatalf("Stop: %v", err)
		}
		again, err := embedetcd.Start(embedetcd.Config{DataDir: cfg.EtcdDataDir, ClientURL: "http://127.0.0.1:0", ReadyTimeout: 10 * time.Second})
		if err != nil {
			t.Fatalf("data dir still held after Stop: %v", err)
		}
		again.Close()
	})
}

func TestFailedStartReleasesEverything(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	cfg := testConfig("")
	cfg.Etcd.Endpoints = nil
	cfg.EtcdDataDir = filepath.Join(t.TempDir(), "etcd")
	cfg.EmbeddedEtcdAddr = "127.0.0.1:0"
	cfg.HTTPAddr = busy.Addr().String()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	d, err := Start(cfg, testLogger(t))
	if err == nil {
		d.Stop(t.Context())
		t.Fatal("Start succeeded on a busy --http-addr")
	}
	t.Run("the error names the flag", func(t *testing.T) {
		if !strings.Contains(err.Error(), "--http-addr") {
			t.Fatalf("error %q does not name --http-addr", err)
		}
	})
	t.Run("the embedded etcd was stopped and its data dir freed", func(t *testing.T) {
		again, err := embedetcd.Start(embedetcd.Config{DataDir: cfg.EtcdDataDir, ClientURL: "http://127.0.0.1:0", ReadyTimeout: 10 * time.Second})
		if err != nil {
			t.Fatalf("data dir still held: %v", err)
		}
		again.Close()
	})
}
