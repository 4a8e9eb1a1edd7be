package gendata_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kubesky/kubesky/bench/gendata"
	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/etcdstore/etcdtest"
)

func spec(n int) gendata.Spec {
	return gendata.Spec{Services: n, Namespaces: 3}.WithDefaults()
}

func TestServicesHaveDistinctNamesAndAddresses(t *testing.T) {
	svcs := gendata.Generate(spec(1000))
	names, ips := map[string]bool{}, map[string]bool{}
	for _, s := range svcs {
		names[s.FQDN("cluster.local")] = true
		ips[s.IP.String()] = true
	}
	if len(names) != 1000 || len(ips) != 1000 {
		t.Fatalf("%d names, %d addresses for 1000 services", len(names), len(ips))
	}
	if got := svcs[4].FQDN("cluster.local"); got != "svc4.ns1.svc.cluster.local." {
		t.Fatalf("service 4 is %s", got)
	}
	if got := svcs[4].IP.String(); got != "10.96.0.5" {
		t.Fatalf("service 4 has IP %s", got)
	}
}

func TestRecordsFollowTheSkyDNSLayout(t *testing.T) {
	s := spec(2)
	kvs := gendata.Records(s, gendata.Generate(s))
	if len(kvs) != 4 {
		t.Fatalf("%d records for 2 services", len(kvs))
	}
	a, srv := kvs[2], kvs[3]
	if !strings.HasPrefix(a.Key, "/skydns/local/cluster/svc/ns1/svc1/") || a.Value != `{"host":"10.96.0.2"}` {
		t.Errorf("A record %+v", a)
	}
	if !strings.HasPrefix(srv.Key, "/skydns/local/cluster/svc/ns1/svc1/_tcp/_http/") ||
		srv.Value != `{"host":"svc1.ns1.svc.cluster.local.","port":80}` {
		t.Errorf("SRV record %+v", srv)
	}
	for _, kv := range kvs {
		if _, err := contract.Decode(kv.Key, []byte(kv.Value)); err != nil {
			t.Errorf("value does not decode: %v", err)
		}
	}
	if got, want := gendata.RawBytes(kvs), len(a.Key)+len(a.Value)+len(srv.Key)+len(srv.Value); got <= want {
		t.Errorf("raw bytes %d, want more than the second service's %d", got, want)
	}
}

func TestQueriesFollowTheMix(t *testing.T) {
	s := spec(500)
	svcs := gendata.Generate(s)
	qs := gendata.Queries(s, svcs, 1000, 1)
	kinds := map[string]int{}
	for _, q := range qs {
		kinds[q.Kind]++
	}
	want := map[string]int{gendata.KindA: 700, gendata.KindSRV: 100, gendata.KindNX: 100, gendata.KindNoData: 100}
	for k, n := range want {
		if kinds[k] != n {
			t.Errorf("%d %s queries, want %d", kinds[k], k, n)
		}
	}
	if again := gendata.Queries(s, svcs, 1000, 1); again[999] != qs[999] {
		t.Error("the same seed gave different queries")
	}
}

func TestQueriesAskForNamesThatExistOrNot(t *testing.T) {
	s := spec(50)
	svcs := gendata.Generate(s)
	exists := map[string]bool{}
	for _, svc := range svcs {
		exists[svc.FQDN(s.Zone)] = true
	}
	for _, q := range gendata.Queries(s, svcs, 200, 7) {
		name := strings.TrimPrefix(q.Name, "_http._tcp.")
		if exists[name] == (q.Kind == gendata.KindNX) {
			t.Errorf("%s query for %s: exists=%v", q.Kind, q.Name, exists[name])
		}
	}
}

func TestFilesAreInTheFormatsDnsmasqAndDnsperfRead(t *testing.T) {
	s := spec(2)
	svcs := gendata.Generate(s)
	var hosts, queries bytes.Buffer
	if err := gendata.WriteHosts(&hosts, s, svcs); err != nil {
		t.Fatal(err)
	}
	if want := "10.96.0.1 svc0.ns0.svc.cluster.local\n10.96.0.2 svc1.ns1.svc.cluster.local\n"; hosts.String() != want {
		t.Errorf("hosts file:\n%s", hosts.String())
	}
	qs := []gendata.Query{{Kind: gendata.KindSRV, Name: "_http._tcp.svc0.ns0.svc.cluster.local.", Type: "SRV"}}
	if err := gendata.WriteQueries(&queries, qs); err != nil {
		t.Fatal(err)
	}
	if want := "_http._tcp.svc0.ns0.svc.cluster.local. SRV\n"; queries.String() != want {
		t.Errorf("query file: %q", queries.String())
	}
}

func TestValidateRejectsImpossibleSpecs(t *testing.T) {
	cases := map[string]gendata.Spec{
		"no services":       {Services: -1, Namespaces: 1, Zone: "z", Prefix: "/p"},
		"too many services": {Services: gendata.MaxServices + 1, Namespaces: 1, Zone: "z", Prefix: "/p"},
		"no namespaces":     {Services: 1, Namespaces: -2, Zone: "z", Prefix: "/p"},
		"a relative prefix": {Services: 1, Namespaces: 1, Zone: "z", Prefix: "skydns"},
	}
	for name, s := range cases {
		t.Run(name, func(t *testing.T) {
			if err := s.WithDefaults().Validate(); err == nil {
				t.Fatal("want an error")
			}
		})
	}
	if err := spec(10).Validate(); err != nil {
		t.Fatalf("the defaults: %v", err)
	}
}

func TestLoadWritesEveryRecordInBatches(t *testing.T) {
	srv := etcdtest.Start(t)
	s := spec(300)
	kvs := gendata.Records(s, gendata.Generate(s))
	rev, err := gendata.Load(t.Context(), srv.Client, kvs, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	resp, err := srv.Client.Get(ctx, "/skydns/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Count != 600 || resp.Header.Revision != rev {
		t.Fatalf("%d keys at revision %d; want 600 at %d", resp.Count, resp.Header.Revision, rev)
	}
	if want := int64(1 + (600+127)/128); rev != want {
		t.Fatalf("revision %d, want %d (one per transaction)", rev, want)
	}
}

func TestLoadSaysWhichBatchFailed(t *testing.T) {
	srv := etcdtest.Start(t)
	srv.Stop()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	_, err := gendata.Load(ctx, srv.Client, []gendata.KV{{Key: "/skydns/x", Value: "{}"}}, 10)
	if err == nil || !strings.Contains(err.Error(), "/skydns/x") {
		t.Fatalf("error %v, want one naming the first key", err)
	}
}

func TestWriteFileSaysWhichFileFailed(t *testing.T) {
	path := t.TempDir() + "/out"
	err := gendata.WriteFile(path, func(w io.Writer) error { return errors.New("disk full") })
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err %v", err)
	}
	if err := gendata.WriteFile("/nonexistent/dir/out", func(io.Writer) error { return nil }); err == nil {
		t.Fatal("an unwritable path: want an error")
	}
}
