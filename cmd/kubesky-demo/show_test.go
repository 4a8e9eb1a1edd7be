package main

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/skydns"
)

// exampleRecords are the records kube2sky writes for deploy/examples
// (labels shortened), so show can be tested without an API server.
var exampleRecords = map[string]string{
	"/skydns/local/cluster/svc/default/web/a1":                 `{"host":"10.96.0.80"}`,
	"/skydns/local/cluster/svc/default/web/_tcp/_https/b2":     `{"host":"web.default.svc.cluster.local.","port":443}`,
	"/skydns/local/cluster/svc/default/db/db-0":                `{"host":"10.244.1.10"}`,
	"/skydns/local/cluster/svc/default/db/db-1":                `{"host":"10.244.2.11"}`,
	"/skydns/local/cluster/svc/default/db/_tcp/_postgres/db-0": `{"host":"db-0.db.default.svc.cluster.local.","port":5432}`,
	"/skydns/arpa/in-addr/10/96/0/80":                          `{"host":"web.default.svc.cluster.local."}`,
	"/skydns/arpa/in-addr/10/244/1/10":                         `{"host":"db-0.db.default.svc.cluster.local."}`,
	"/skydns/local/cluster/svc/default/docs/c3":                `{"host":"kubernetes.io."}`,
	"/skydns/local/cluster/dns-version":                        `{"text":"1.1.0"}`,
}

// startSkydns runs a skydns daemon in the test over a fresh etcd.
func startSkydns(t *testing.T) (*etcdtest.Server, *skydns.Daemon) {
	t.Helper()
	etcd := etcdtest.Start(t)
	cfg := skydns.DefaultConfig()
	cfg.DNSAddr, cfg.HTTPAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Etcd.Endpoints = []string{etcd.ClientURL()}
	cfg.Forwarder = skydns.Refuse
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	d, err := skydns.Start(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		d.Stop(ctx)
	})
	return etcd, d
}

func TestShow(t *testing.T) {
	etcd, d := startSkydns(t)
	args := []string{"--etcd-endpoints", etcd.ClientURL(), "--dns-addr", d.DNSAddr()}

	t.Run("without the records it gives up after --wait and says why", func(t *testing.T) {
		code, _, errOut := runMain(t, append([]string{"show", "--wait", "300ms"}, args...)...)
		if code != 1 || !strings.Contains(errOut, "does not serve the examples yet") {
			t.Fatalf("code %d, %q", code, errOut)
		}
	})
	for key, value := range exampleRecords {
		etcd.Put(t, key, value)
	}
	t.Run("it lists the keys as etcdctl does and answers as dig does", func(t *testing.T) {
		code, out, errOut := runMain(t, append([]string{"show"}, args...)...)
		if code != 0 {
			t.Fatalf("code %d: %s", code, errOut)
		}
		want := []string{
			"$ etcdctl --endpoints " + etcd.ClientURL() + " get --prefix /skydns/\n",
			"/skydns/arpa/in-addr/10/96/0/80\n{\"host\":\"web.default.svc.cluster.local.\"}\n",
			"+noall +answer web.default.svc.cluster.local. A\nweb.default.svc.cluster.local.\t30\tIN\tA\t10.96.0.80\n",
			"+noall +answer -x 10.96.0.80\n80.0.96.10.in-addr.arpa.\t30\tIN\tPTR\tweb.default.svc.cluster.local.\n",
			"_postgres._tcp.db.default.svc.cluster.local.\t30\tIN\tSRV\t10 100 5432 db-0.db.default.svc.cluster.local.\n",
			"docs.default.svc.cluster.local.\t30\tIN\tCNAME\tkubernetes.io.\n",
			"nothere.default.svc.cluster.local. A\n;; status: NXDOMAIN, no answer records\n",
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("output lacks %q", w)
			}
		}
		if t.Failed() {
			t.Logf("output:\n%s", out)
		}
	})
}
