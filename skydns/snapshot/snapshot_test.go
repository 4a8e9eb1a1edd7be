package snapshot_test

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/skydns/snapshot"
	"github.com/kubesky/kubesky/skydns/snapshot/snapshottest"
)

const prefix = "/skydns"

func put(key, value string) contract.Event {
	return contract.Event{Type: contract.Put, Key: key, Value: []byte(value)}
}

func del(key string) contract.Event {
	return contract.Event{Type: contract.Delete, Key: key}
}

// keys lists the keys of entries, in order.
func keys(entries []snapshot.Entry) string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Key())
	}
	return strings.Join(out, " ")
}

// all lists every key in a snapshot.
func all(s *snapshot.Snapshot) string { return keys(s.Lookup(".")) }

func TestApply(t *testing.T) {
	base := snapshottest.Build(t, prefix, map[string]string{
		"/skydns/local/cluster/a": `{"host":"10.0.0.1"}`,
		"/skydns/local/cluster/b": `{"host":"10.0.0.2"}`,
	})
	tests := []struct {
		name     string
		update   contract.Update
		wantKeys string
		wantErrs []string // substrings, one per expected error
	}{
		{
			name:     "a put adds a record and keeps the others",
			update:   contract.Update{Revision: 2, Events: []contract.Event{put("/skydns/local/cluster/c", `{"host":"10.0.0.3"}`)}},
			wantKeys: "/skydns/local/cluster/a /skydns/local/cluster/b /skydns/local/cluster/c",
		},
		{
			name:     "a delete removes the record",
			update:   contract.Update{Revision: 2, Events: []contract.Event{del("/skydns/local/cluster/a")}},
			wantKeys: "/skydns/local/cluster/b",
		},
		{
			name:     "deleting a key that is not there changes nothing",
			update:   contract.Update{Revision: 2, Events: []contract.Event{del("/skydns/local/cluster/zz")}},
			wantKeys: "/skydns/local/cluster/a /skydns/local/cluster/b",
		},
		{
			name:     "a full update replaces every record",
			update:   contract.Update{Revision: 9, Full: true, Events: []contract.Event{put("/skydns/local/cluster/z", `{"host":"10.0.0.9"}`)}},
			wantKeys: "/skydns/local/cluster/z",
		},
		{
			name:     "a full update with no events empties the snapshot",
			update:   contract.Update{Revision: 9, Full: true},
			wantKeys: "",
		},
		{
			name: "a malformed value is skipped and the previous good value at its key removed",
			update: contract.Update{Revision: 2, Events: []contract.Event{
				put("/skydns/local/cluster/a", `{"host":`),
				put("/skydns/local/cluster/c", `{"port":80}`),
				put("/skydns/local/cluster/d", `{"host":"10.0.0.4"}`),
			}},
			wantKeys: "/skydns/local/cluster/b /skydns/local/cluster/d",
			wantErrs: []string{`"/skydns/local/cluster/a"`, `"/skydns/local/cluster/c"`},
		},
		{
			name: "a key with upper-case letters is skipped and reported",
			update: contract.Update{Revision: 2, Events: []contract.Event{
				put("/skydns/local/cluster/Upper", `{"host":"10.0.0.7"}`),
			}},
			wantKeys: "/skydns/local/cluster/a /skydns/local/cluster/b",
			wantErrs: []string{`"/skydns/local/cluster/Upper": not lower case`},
		},
		{
			name: "keys outside the prefix are ignored",
			update: contract.Update{Revision: 2, Events: []contract.Event{
				put("/skydnsx/local/cluster/x", `{"host":"10.0.0.5"}`),
				put("/skydns", `{"host":"10.0.0.6"}`),
				put("/other/y", `not json`),
			}},
			wantKeys: "/skydns/local/cluster/a /skydns/local/cluster/b",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next, errs := base.Apply(tt.update)
			if got := all(next); got != tt.wantKeys {
				t.Errorf("keys = %q, want %q", got, tt.wantKeys)
			}
			if next.Revision() != tt.update.Revision {
				t.Errorf("Revision() = %d, want %d", next.Revision(), tt.update.Revision)
			}
			if next.Len() != len(strings.Fields(tt.wantKeys)) {
				t.Errorf("Len() = %d, want %d", next.Len(), len(strings.Fields(tt.wantKeys)))
			}
			checkErrors(t, errs, tt.wantErrs)
			if got := all(base); got != "/skydns/local/cluster/a /skydns/local/cluster/b" {
				t.Errorf("the original snapshot changed: %q", got)
			}
		})
	}
}

func checkErrors(t *testing.T, errs []error, want []string) {
	t.Helper()
	if len(errs) != len(want) {
		t.Fatalf("errors = %v, want %d naming %v", errs, len(want), want)
	}
	for i, err := range errs {
		if !strings.Contains(err.Error(), want[i]) {
			t.Errorf("error %d = %q, want it to name %s", i, err, want[i])
		}
	}
}

func TestApplyDecodesOnce(t *testing.T) {
	snap := snapshottest.Build(t, prefix, map[string]string{
		"/skydns/local/cluster/v4":     `{"host":"10.0.0.1","owner":"kube2sky"}`,
		"/skydns/local/cluster/v6":     `{"host":"2001:db8::1"}`,
		"/skydns/local/cluster/mapped": `{"host":"::ffff:10.0.0.2"}`,
		"/skydns/local/cluster/name":   `{"host":"Example.COM"}`,
		"/skydns/local/cluster/fqdn":   `{"host":"example.org."}`,
		"/skydns/local/cluster/text":   `{"text":"hello"}`,
	})
	tests := []struct {
		name, key, wantHost string
		wantIP              net.IP
	}{
		{"an IPv4 host is parsed to four bytes", "v4", "10.0.0.1", net.IP{10, 0, 0, 1}},
		{"an IPv6 host is parsed to sixteen bytes", "v6", "2001:db8::1", net.ParseIP("2001:db8::1")},
		{"an IPv4-mapped IPv6 host is an IPv4 address", "mapped", "::ffff:10.0.0.2", net.IP{10, 0, 0, 2}},
		{"a host name is made fully qualified and lower case", "name", "example.com.", nil},
		{"a fully qualified host name is kept", "fqdn", "example.org.", nil},
		{"a text record has no host", "text", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := snap.Exact(tt.key + ".cluster.local.")
			if len(got) != 1 {
				t.Fatalf("Exact found %d entries, want 1", len(got))
			}
			e := got[0]
			if e.Record.Host != tt.wantHost || !e.IP.Equal(tt.wantIP) || len(e.IP) != len(tt.wantIP) {
				t.Errorf("host %q ip %v, want host %q ip %v", e.Record.Host, e.IP, tt.wantHost, tt.wantIP)
			}
			if e.Record.Owner != "" {
				t.Errorf("owner %q kept, want it dropped", e.Record.Owner)
			}
		})
	}
}

func TestEmpty(t *testing.T) {
	s := snapshot.Empty("/custom/prefix/")
	if s.Prefix() != "/custom/prefix" || s.Len() != 0 || s.Revision() != 0 {
		t.Errorf("Empty = prefix %q len %d revision %d, want /custom/prefix 0 0", s.Prefix(), s.Len(), s.Revision())
	}
	next, _ := s.Apply(contract.Update{Revision: 3, Events: []contract.Event{
		put("/custom/prefix/local/cluster/a", `{"host":"10.0.0.1"}`),
		put("/skydns/local/cluster/a", `{"host":"10.0.0.1"}`),
	}})
	if got := keys(next.Lookup("a.cluster.local.")); got != "/custom/prefix/local/cluster/a" {
		t.Errorf("Lookup under a custom prefix = %q", got)
	}
}

func TestReadersNeverSeeAnApplyInProgress(t *testing.T) {
	snap := snapshottest.Build(t, prefix, map[string]string{"/skydns/local/cluster/a/x": `{"host":"10.0.0.1"}`})
	done := make(chan struct{})
	go func() {
		defer close(done)
		next := snap
		for i := range 200 {
			next, _ = next.Apply(contract.Update{Revision: int64(i + 2), Events: []contract.Event{
				put("/skydns/local/cluster/a/y", `{"host":"10.0.0.2"}`),
				del("/skydns/local/cluster/a/x"),
			}})
		}
	}()
	for {
		select {
		case <-done:
			return
		default:
		}
		if got := keys(snap.Lookup("a.cluster.local.")); got != "/skydns/local/cluster/a/x" {
			t.Fatalf("the published snapshot changed under a reader: %q", got)
		}
	}
}

func TestAFullListHoldsWhatTheSameEventsOneByOneHold(t *testing.T) {
	// Keys out of tree order ("a-b" sorts before "a/" in etcd but after it
	// in the tree), a key given twice, and enough of them to pack several
	// runs and split leaves: given in a shuffled order and in etcd's.
	var events []contract.Event
	for i := range 3000 {
		base := fmt.Sprintf("/skydns/local/cluster/svc/ns%d/web", (i*7919)%97)
		events = append(events, put(fmt.Sprintf("%s/x%d", base, i), fmt.Sprintf(`{"host":"10.0.%d.%d"}`, i/256, i%256)),
			put(fmt.Sprintf("%s-b/x%d", base, i), fmt.Sprintf(`{"host":"h%d.example.","port":%d}`, i, i+1)))
		if i < 97 { // a record at "web" itself: in etcd's order before "web-b/…", in the tree after
			events = append(events, put(base, `{"host":"10.1.1.1"}`))
		}
	}
	events = append(events, put("/skydns/local/cluster/svc/ns0/web/x0", `{"host":"10.9.9.9"}`))
	inEtcdOrder := slices.Clone(events)
	slices.SortStableFunc(inEtcdOrder, func(a, b contract.Event) int { return strings.Compare(a.Key, b.Key) })
	for name, events := range map[string][]contract.Event{"shuffled": events, "etcd's order": inEtcdOrder} {
		full, errs := snapshot.Empty(prefix).Apply(contract.Update{Revision: 1, Full: true, Events: events})
		checkErrors(t, errs, nil)
		oneByOne, errs := snapshot.Empty(prefix).Apply(contract.Update{Revision: 1, Events: events})
		checkErrors(t, errs, nil)
		if full.Len() != oneByOne.Len() || full.Len() != 6097 {
			t.Fatalf("%s: full list holds %d records, one by one %d, want 6097", name, full.Len(), oneByOne.Len())
		}
		got, want := full.Lookup("."), oneByOne.Lookup(".")
		for i := range want {
			if got[i].Key() != want[i].Key() || got[i].Record != want[i].Record {
				t.Fatalf("%s: record %d: full list %s %+v, one by one %s %+v", name, i, got[i].Key(), got[i].Record, want[i].Key(), want[i].Record)
			}
		}
		if es := full.Exact("x0.web.ns0.svc.cluster.local."); len(es) != 1 || es[0].Record.Host != "10.9.9.9" {
			t.Errorf("%s: the key given twice holds %+v, want the last value", name, es)
		}
	}
}

// TestABuilderMakesWhatAFullUpdateMakesAndKeepsItsMalformedEvents: events
// added one at a time build the snapshot a Full update of them builds; a
// value that does not decode is an error of Build, and its event is
// returned by Malformed (the key outside the prefix is neither).
func TestABuilderMakesWhatAFullUpdateMakesAndKeepsItsMalformedEvents(t *testing.T) {
	events := []contract.Event{
		put("/skydns/local/cluster/svc/ns/web/a", `{"host":"10.0.0.1"}`),
		put("/skydns/local/cluster/svc/ns/web/b", `not json`),
		put("/other/key", `{"host":"10.0.0.3"}`),
		put("/skydns/local/cluster/svc/ns/db/a", `{"host":"db.example."}`),
	}
	b := snapshot.Empty(prefix).NewBuilder()
	for _, ev := range events {
		b.Add(ev)
	}
	built, errs := b.Build(7)
	full, fullErrs := snapshot.Empty(prefix).Apply(contract.Update{Revision: 7, Full: true, Events: events})
	if len(errs) != 1 || len(fullErrs) != 1 || !strings.Contains(errs[0].Error(), "/skydns/local/cluster/svc/ns/web/b") {
		t.Fatalf("errors %v and %v, want one naming the malformed key each", errs, fullErrs)
	}
	if bad := b.Malformed(); len(bad) != 1 || bad[0].Key != events[1].Key || string(bad[0].Value) != "not json" {
		t.Errorf("Malformed() = %+v, want the event of web/b", bad)
	}
	if built.Revision() != 7 || all(built) != all(full) || built.Len() != 2 {
		t.Errorf("built at %d: %q, want at 7 what the Full update holds: %q", built.Revision(), all(built), all(full))
	}
}
