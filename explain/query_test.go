package explain

import (
	"strings"
	"testing"

	"github.com/miekg/dns"
)

func TestParseQuery(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		want    Query
		wantErr string
	}{
		{"a service name defaults to A and its key", []string{"Web.Default.svc.cluster.local"},
			Query{Name: "web.default.svc.cluster.local.", Type: dns.TypeA, Key: "/skydns/local/cluster/svc/default/web"}, ""},
		{"a type is read in any case", []string{"_http._tcp.web.default.svc.cluster.local.", "srv"},
			Query{Name: "_http._tcp.web.default.svc.cluster.local.", Type: dns.TypeSRV, Key: "/skydns/local/cluster/svc/default/web/_tcp/_http"}, ""},
		{"an IPv4 address is its PTR name, exact", []string{"10.96.0.10"},
			Query{Name: "10.0.96.10.in-addr.arpa.", Type: dns.TypePTR, Key: "/skydns/arpa/in-addr/10/96/0/10", Reverse: true}, ""},
		{"a reverse name is exact too", []string{"10.0.96.10.in-addr.arpa", "PTR"},
			Query{Name: "10.0.96.10.in-addr.arpa.", Type: dns.TypePTR, Key: "/skydns/arpa/in-addr/10/96/0/10", Reverse: true}, ""},
		{"no name is an error", nil, Query{}, "want NAME [TYPE], got 0 arguments"},
		{"three arguments are an error", []string{"a.", "A", "x"}, Query{}, "want NAME [TYPE], got 3 arguments"},
		{"an empty label is a bad name", []string{"web..default.svc"}, Query{}, `bad name "web..default.svc": empty label`},
		{"a space is a bad name", []string{"my web.default"}, Query{}, `bad name "my web.default": label "my web" has ' '`},
		{"a label over 63 characters is a bad name", []string{strings.Repeat("a", 64) + ".local"}, Query{}, "longer than 63 characters"},
		{"a name over 253 characters is a bad name", []string{strings.Repeat("abcdefghi.", 26)}, Query{}, "259 characters, more than 253"},
		{"the root is a bad name", []string{"."}, Query{}, "the root has no records"},
		{"an unknown type is an error listing the known ones", []string{"web.default.svc.cluster.local", "AX"}, Query{},
			`unknown type "AX" (want one of A, AAAA, ANY, CNAME, MX, NS, PTR, SOA, SRV, TXT)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseQuery("/skydns", c.args)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("ParseQuery = %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}

func TestInScope(t *testing.T) {
	fwd := Query{Key: "/skydns/local/cluster/svc/default/web"}
	rev := Query{Key: "/skydns/arpa/in-addr/10/96/0/1", Reverse: true}
	wild := Query{Key: "/skydns/local/cluster/svc/*/web"}
	cases := []struct {
		q    Query
		key  string
		want bool
	}{
		{fwd, "/skydns/local/cluster/svc/default/web", true},
		{fwd, "/skydns/local/cluster/svc/default/web/1a2b3c4d", true},
		{fwd, "/skydns/local/cluster/svc/default/webby/1a2b3c4d", false},
		{rev, "/skydns/arpa/in-addr/10/96/0/1", true},
		{rev, "/skydns/arpa/in-addr/10/96/0/1/x", false},
		{wild, "/skydns/local/cluster/svc/default/web/1a2b3c4d", true},
		{wild, "/skydns/local/cluster/svc/kube-system/web", true},
		{wild, "/skydns/local/cluster/svc/default/db/1a2b3c4d", false},
	}
	for _, c := range cases {
		if got := c.q.InScope(c.key); got != c.want {
			t.Errorf("%s in scope of %s: %v, want %v", c.key, c.q.Key, got, c.want)
		}
	}
}
