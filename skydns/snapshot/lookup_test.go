package snapshot_test

import (
	"testing"

	"github.com/kubesky/kubesky/skydns/snapshot/snapshottest"
)

var lookupRecords = map[string]string{
	"/skydns/local/cluster/svc/default/web":              `{"host":"10.0.0.9"}`,
	"/skydns/local/cluster/svc/default/web/a1":           `{"host":"10.0.0.1"}`,
	"/skydns/local/cluster/svc/default/web/_tcp/_http/a": `{"host":"web.default.svc.cluster.local","port":80}`,
	"/skydns/local/cluster/svc/default/webx/b1":          `{"host":"10.0.0.2"}`,
	"/skydns/local/cluster/svc/other/web/c1":             `{"host":"10.0.0.3"}`,
	"/skydns/arpa/in-addr/10/0/0/1":                      `{"host":"web.default.svc.cluster.local"}`,
}

func TestLookup(t *testing.T) {
	snap := snapshottest.Build(t, prefix, lookupRecords)
	tests := []struct{ name, qname, want string }{
		{"a name returns its own record and everything below it, in key order", "web.default.svc.cluster.local.",
			"/skydns/local/cluster/svc/default/web /skydns/local/cluster/svc/default/web/_tcp/_http/a /skydns/local/cluster/svc/default/web/a1"},
		{"a sibling sharing leading characters is not below", "webx.default.svc.cluster.local.",
			"/skydns/local/cluster/svc/default/webx/b1"},
		{"a leaf returns only itself", "a1.web.default.svc.cluster.local.", "/skydns/local/cluster/svc/default/web/a1"},
		{"the trailing dot is optional", "a1.web.default.svc.cluster.local", "/skydns/local/cluster/svc/default/web/a1"},
		{"names match without regard to case", "A1.Web.DEFAULT.svc.cluster.local.", "/skydns/local/cluster/svc/default/web/a1"},
		{"a name with nothing at or below it has no records", "nope.default.svc.cluster.local.", ""},
		{"a name below a record is not the record", "x.a1.web.default.svc.cluster.local.", ""},
		{"a * label matches any one label", "web.*.svc.cluster.local.",
			"/skydns/local/cluster/svc/default/web /skydns/local/cluster/svc/default/web/_tcp/_http/a /skydns/local/cluster/svc/default/web/a1 /skydns/local/cluster/svc/other/web/c1"},
		{"an any label matches any one label", "ANY.default.svc.cluster.local.",
			"/skydns/local/cluster/svc/default/web /skydns/local/cluster/svc/default/web/_tcp/_http/a /skydns/local/cluster/svc/default/web/a1 /skydns/local/cluster/svc/default/webx/b1"},
		{"a leftmost wildcard matches one label below the name", "*.web.default.svc.cluster.local.",
			"/skydns/local/cluster/svc/default/web/_tcp/_http/a /skydns/local/cluster/svc/default/web/a1"},
		{"a wildcard does not match a missing label", "*.a1.web.default.svc.cluster.local.", ""},
		{"a label with a slash cannot be a key", "a1/x.web.default.svc.cluster.local.", ""},
		{"a label with an escape cannot be a key", `a\.1.web.default.svc.cluster.local.`, ""},
		{"an empty label cannot be a key", "a1..web.default.svc.cluster.local.", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := keys(snap.Lookup(tt.qname)); got != tt.want {
				t.Errorf("Lookup(%q) = %q\nwant %q", tt.qname, got, tt.want)
			}
			if got, want := snap.Exists(tt.qname), tt.want != ""; got != want {
				t.Errorf("Exists(%q) = %v, want %v", tt.qname, got, want)
			}
		})
	}
}

func TestExact(t *testing.T) {
	snap := snapshottest.Build(t, prefix, lookupRecords)
	tests := []struct{ name, qname, want string }{
		{"a PTR name returns its own record", "1.0.0.10.in-addr.arpa.", "/skydns/arpa/in-addr/10/0/0/1"},
		{"an empty non-terminal has no exact record", "0.0.10.in-addr.arpa.", ""},
		{"records below the name are not returned", "web.default.svc.cluster.local.", "/skydns/local/cluster/svc/default/web"},
		{"a wildcard matches one label at the same depth only", "*.0.0.10.in-addr.arpa.", "/skydns/arpa/in-addr/10/0/0/1"},
		{"a missing name has no record", "2.0.0.10.in-addr.arpa.", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := keys(snap.Exact(tt.qname)); got != tt.want {
				t.Errorf("Exact(%q) = %q, want %q", tt.qname, got, tt.want)
			}
		})
	}
}

func TestExistsForEmptyNonTerminals(t *testing.T) {
	snap := snapshottest.Build(t, prefix, lookupRecords)
	for _, name := range []string{"svc.cluster.local.", "cluster.local.", "0.10.in-addr.arpa.", "_tcp.web.default.svc.cluster.local."} {
		if !snap.Exists(name) {
			t.Errorf("Exists(%q) = false, want true: records live below it", name)
		}
	}
}
