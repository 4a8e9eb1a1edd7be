package snapshot_test

import (
	"net"
	"testing"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/skydns/snapshot"
)

func TestEntriesGiveBackEveryFieldOfTheRecord(t *testing.T) {
	key := "/skydns/local/cluster/svc/default/web/_tcp/_http/a1"
	value := `{"host":"Web.Example.","port":65535,"priority":7,"weight":65535,"text":"hello","mail":true,` +
		`"ttl":4294967295,"targetstrip":127,"group":"g1","owner":"kube2sky"}`
	snap, errs := snapshot.Empty(prefix).Apply(contract.Update{Revision: 1, Full: true, Events: []contract.Event{put(key, value)}})
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	es := snap.Exact("a1._http._tcp.web.default.svc.cluster.local.")
	if len(es) != 1 {
		t.Fatalf("found %d entries, want 1", len(es))
	}
	want := contract.Record{Host: "web.example.", Port: 65535, Priority: 7, Weight: 65535, Text: "hello", Mail: true,
		TTL: 4294967295, TargetStrip: 127, Group: "g1"}
	if got := es[0].Record; got != want {
		t.Errorf("record\n got %+v\nwant %+v", got, want)
	}
	if got := es[0].Key(); got != key {
		t.Errorf("Key() = %q, want %q", got, key)
	}
	if got := es[0].Depth(); got != 8 {
		t.Errorf("Depth() = %d, want 8 labels below the prefix", got)
	}
}

func TestAnAddressEntryKeepsItsHostAndParsedAddress(t *testing.T) {
	key := "/skydns/local/cluster/svc/default/web/a1"
	snap, _ := snapshot.Empty(prefix).Apply(contract.Update{Revision: 1, Full: true,
		Events: []contract.Event{put(key, `{"host":"::ffff:10.0.0.1"}`)}})
	es := snap.Lookup("web.default.svc.cluster.local.")
	if len(es) != 1 || !es[0].IP.Equal(net.IPv4(10, 0, 0, 1)) || len(es[0].IP) != 4 || es[0].Record.Host != "::ffff:10.0.0.1" {
		t.Fatalf("entries %+v, want one with the 4-byte address 10.0.0.1 and the host as written", es)
	}
	if es[0].Key() != key {
		t.Errorf("Key() = %q, want %q", es[0].Key(), key)
	}
}

func TestAnIPv6EntryIsACopyTheCallerMayChange(t *testing.T) {
	key := "/skydns/local/cluster/svc/default/web/a1"
	snap, _ := snapshot.Empty(prefix).Apply(contract.Update{Revision: 1, Full: true,
		Events: []contract.Event{put(key, `{"host":"fd00::1","port":80,"text":"t"}`)}})
	first := snap.Lookup("web.default.svc.cluster.local.")
	if len(first) != 1 || len(first[0].IP) != 16 || !first[0].IP.Equal(net.ParseIP("fd00::1")) {
		t.Fatalf("entries %+v, want one with the 16-byte address fd00::1", first)
	}
	first[0].IP[15] = 9
	again := snap.Lookup("web.default.svc.cluster.local.")
	want := contract.Record{Host: "fd00::1", Port: 80, Text: "t"}
	if !again[0].IP.Equal(net.ParseIP("fd00::1")) || again[0].Record != want {
		t.Errorf("after the caller changed its copy: %+v, want fd00::1 and %+v", again[0], want)
	}
}
