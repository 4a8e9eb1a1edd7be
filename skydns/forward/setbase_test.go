package forward

import (
	"fmt"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/skydns/snapshot"
)

// TestSetBase changes the flags' upstreams and stub domains of a running
// forwarder, all or none, under the records in etcd.
func TestSetBase(t *testing.T) {
	first := startUpstream(t, answerA("192.0.2.1", 60))
	second := startUpstream(t, answerA("192.0.2.2", 60))
	stub := startUpstream(t, answerA("192.0.2.3", 60))
	fromEtcd := startUpstream(t, answerA("192.0.2.4", 60))
	f, _, _ := testForwarder(t, testConfig(first.addr))
	reload := testConfig(second.addr)
	reload.StubDomains = []string{"example.corp=" + stub.addr}

	t.Run("new upstreams and stub domains answer at once", func(t *testing.T) {
		wantA(t, ask(t, f, "a.example.org.", dns.TypeA), "192.0.2.1", 60)
		if err := f.SetBase(reload); err != nil {
			t.Fatal(err)
		}
		wantA(t, ask(t, f, "b.example.org.", dns.TypeA), "192.0.2.2", 60)
		wantA(t, ask(t, f, "www.example.corp.", dns.TypeA), "192.0.2.3", 60)
	})

	t.Run("a config that does not parse changes nothing", func(t *testing.T) {
		bad := testConfig(first.addr)
		bad.StubDomains = []string{"example.net=not-an-ip"}
		if err := f.SetBase(bad); err == nil || !strings.Contains(err.Error(), "--stub-domain") {
			t.Fatalf("SetBase: %v, want the --stub-domain error", err)
		}
		wantA(t, ask(t, f, "c.example.org.", dns.TypeA), "192.0.2.2", 60)
		wantA(t, ask(t, f, "mail.example.corp.", dns.TypeA), "192.0.2.3", 60)
	})

	t.Run("an upstream record in etcd still wins over the flags'", func(t *testing.T) {
		f.SetLiveFrom(upstreamRecord(t, fromEtcd.addr), "cluster.local.")
		wantA(t, ask(t, f, "d.example.org.", dns.TypeA), "192.0.2.4", 60)
		if err := f.SetBase(testConfig(first.addr)); err != nil {
			t.Fatal(err)
		}
		wantA(t, ask(t, f, "e.example.org.", dns.TypeA), "192.0.2.4", 60)
		if (*f.stubs.Load()).lookup("www.example.corp.") != nil {
			t.Error("example.corp. is still a stub domain after a config without it")
		}
	})
}

// upstreamRecord is a snapshot whose dns/config/upstream record names addr.
func upstreamRecord(t *testing.T, addr string) *snapshot.Snapshot {
	t.Helper()
	value := fmt.Sprintf(`{"text":%q}`, addr)
	snap, errs := snapshot.Empty("/skydns").Apply(contract.Update{Revision: 2, Full: true, Events: []contract.Event{
		{Key: ConfigKey("/skydns", FlagUpstream, "cluster.local."), Value: []byte(value)},
	}})
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	return snap
}
