package forward

import (
	"context"
	"sync"
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/etcdstore"
	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/polltest"
	"github.com/kubesky/kubesky/skydns/snapshot"
)

func TestStubsFromSnapshot(t *testing.T) {
	snap, errs := snapshot.Empty("/skydns").Apply(contract.Update{Revision: 2, Full: true, Events: []contract.Event{
		{Key: "/skydns/local/cluster/dns/stub/corp/example/ns1", Value: []byte(`{"host":"10.0.0.53","port":53}`)},
		{Key: "/skydns/local/cluster/dns/stub/corp/example/ns2", Value: []byte(`{"host":"10.0.0.54"}`)},
		{Key: "/skydns/local/cluster/dns/stub/net/other/x", Value: []byte(`{"host":"ns.other.net."}`)},
		{Key: "/skydns/local/cluster/svc/default/web/a", Value: []byte(`{"host":"10.96.0.10"}`)},
		{Key: "/skydns/local/other/dns/stub/org/example/ns1", Value: []byte(`{"host":"10.0.0.55"}`)},
	}})
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	stubs, problems := StubsFromSnapshot(snap, []string{"cluster.local."})
	if len(stubs) != 1 || len(stubs["example.corp."]) != 2 || stubs["example.corp."][1] != "10.0.0.54:53" {
		t.Errorf("stubs %v, want example.corp. with two servers", stubs)
	}
	if len(problems) != 1 {
		t.Errorf("problems %v, want one (a host that is a name)", problems)
	}
}

// TestStubDomainsFromEtcd follows the path an operator takes: etcdctl put
// and delete of dns/stub keys, mirrored into snapshots that the server
// hands to SetStubsFrom.
func TestStubDomainsFromEtcd(t *testing.T) {
	def := startUpstream(t, answerA("192.0.2.1", 60))
	stub := startUpstream(t, answerA("192.0.2.9", 60))
	f, _, _ := testForwarder(t, testConfig(def.addr))
	etcd := etcdtest.Start(t)
	mirrorStubs(t, etcd, f, "cluster.local.")

	key := StubKeyPrefix("/skydns", "cluster.local.") + "corp/example/ns1"
	t.Run("a stub record put in etcd routes its domain at once", func(t *testing.T) {
		host, port := splitHostPort(t, stub.addr)
		value := contract.Record{Host: host, Port: port}.Encode()
		if _, err := etcd.Client.Put(t.Context(), key, string(value)); err != nil {
			t.Fatal(err)
		}
		polltest.True(t, "answered by the stub server", func() bool {
			m := ask(t, f, "www.example.corp.", dns.TypeA)
			return len(m.Answer) == 1 && m.Answer[0].(*dns.A).A.String() == "192.0.2.9"
		})
	})

	t.Run("deleting the record sends the domain back to the upstreams", func(t *testing.T) {
		if _, err := etcd.Client.Delete(t.Context(), key); err != nil {
			t.Fatal(err)
		}
		polltest.True(t, "answered by the default upstream", func() bool {
			m := ask(t, f, "www.example.corp.", dns.TypeA)
			return len(m.Answer) == 1 && m.Answer[0].(*dns.A).A.String() == "192.0.2.1"
		})
	})
}

// mirrorStubs runs a list-then-watch of /skydns into snapshots until the
// test ends, calling f.SetStubsFrom with each one as the server does.
func mirrorStubs(t *testing.T, etcd *etcdtest.Server, f *Forwarder, zone string) {
	t.Helper()
	snap := snapshot.Empty("/skydns")
	lw := &etcdstore.ListWatcher{Source: etcd.Client, Prefix: "/skydns/", OnUpdate: func(u contract.Update) {
		snap, _ = snap.Apply(u)
		f.SetStubsFrom(snap, []string{zone})
	}}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = lw.Run(ctx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
}

func splitHostPort(t *testing.T, addr string) (string, int) {
	t.Helper()
	ap, err := parseServer(addr)
	if err != nil {
		t.Fatal(err)
	}
	return ap.Addr().String(), int(ap.Port())
}

func TestConfigKeysAreNamedLikeTheirFlags(t *testing.T) {
	if got, want := ConfigKey("/skydns", FlagUpstream, "cluster.local."), "/skydns/local/cluster/dns/config/upstream"; got != want {
		t.Errorf("ConfigKey = %q, want %q", got, want)
	}
	if got, want := ConfigName(FlagCacheSize, "cluster.local"), "cache-size.config.dns.cluster.local."; got != want {
		t.Errorf("ConfigName = %q, want %q", got, want)
	}
}
