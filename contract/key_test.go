package contract

import (
	"net/netip"
	"testing"
)

func TestKeyAndNameAreInverses(t *testing.T) {
	cases := []struct{ prefix, name, key string }{
		{"/skydns", "web.default.svc.cluster.local.", "/skydns/local/cluster/svc/default/web"},
		{"/skydns", "Web.Default.SVC.cluster.local", "/skydns/local/cluster/svc/default/web"},
		{"/skydns/", "_http._tcp.web.default.svc.cluster.local.", "/skydns/local/cluster/svc/default/web/_tcp/_http"},
		{"/other/prefix", "a.b.", "/other/prefix/b/a"},
		{"/skydns", ".", "/skydns"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Key(c.prefix, c.name); got != c.key {
				t.Fatalf("Key(%q, %q) = %q, want %q", c.prefix, c.name, got, c.key)
			}
			name, ok := Name(c.prefix, c.key)
			want := Labels(c.name)
			if !ok || Key(c.prefix, name) != c.key || len(Labels(name)) != len(want) {
				t.Fatalf("Name(%q) = %q, %v", c.key, name, ok)
			}
		})
	}
}

func TestNameRejectsKeysOutsideThePrefix(t *testing.T) {
	for _, key := range []string{"/skydnsx/local", "/other/local", "local/cluster", "/skydns/"} {
		if name, ok := Name("/skydns", key); ok {
			t.Errorf("Name(%q) = %q, want not ok", key, name)
		}
	}
}

func TestReverseNamesForBothFamilies(t *testing.T) {
	cases := map[string]string{
		"10.96.0.1":        "1.0.96.10.in-addr.arpa.",
		"::ffff:10.96.0.1": "1.0.96.10.in-addr.arpa.",
		"fd00:10:96::a":    "a.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.6.9.0.0.0.1.0.0.0.0.d.f.ip6.arpa.",
		"2001:db8::1":      "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.",
	}
	for ip, want := range cases {
		addr := netip.MustParseAddr(ip)
		if got := ReverseName(addr); got != want {
			t.Errorf("ReverseName(%s) = %s, want %s", ip, got, want)
		}
		back, ok := AddrFromReverse(want)
		if !ok || back != addr.Unmap() {
			t.Errorf("AddrFromReverse(%s) = %v, %v; want %s", want, back, ok, addr.Unmap())
		}
	}
	if got := ReverseKey("/skydns", netip.MustParseAddr("10.96.0.1")); got != "/skydns/arpa/in-addr/10/96/0/1" {
		t.Errorf("ReverseKey = %s", got)
	}
}

func TestAddrFromReverseRejectsPartialAndOddNames(t *testing.T) {
	for _, name := range []string{"0.96.10.in-addr.arpa.", "1.0.96.300.in-addr.arpa.", "01.0.96.10.in-addr.arpa.", "x.0.ip6.arpa.", "web.cluster.local."} {
		if a, ok := AddrFromReverse(name); ok {
			t.Errorf("AddrFromReverse(%s) = %v, want not ok", name, a)
		}
	}
}

func TestMatchKeyWithWildcards(t *testing.T) {
	cases := []struct {
		pattern, key string
		want         bool
	}{
		{"/skydns/local/cluster/svc/*/web", "/skydns/local/cluster/svc/default/web/a1", true},
		{"/skydns/local/cluster/svc/any/web", "/skydns/local/cluster/svc/prod/web", true},
		{"/skydns/local/cluster/svc/*/web", "/skydns/local/cluster/svc/default/db", false},
		{"/skydns/local/cluster/svc/default/web", "/skydns/local/cluster/svc/default", false},
	}
	for _, c := range cases {
		if got := MatchKey(c.pattern, c.key); got != c.want {
			t.Errorf("MatchKey(%s, %s) = %v, want %v", c.pattern, c.key, got, c.want)
		}
	}
}
