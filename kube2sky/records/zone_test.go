package records

import (
	"net/netip"
	"testing"

	"github.com/kubesky/kubesky/contract"
)

func TestRecordValuesAreExactSkyDNSJSON(t *testing.T) {
	entries, _ := Build(testZone, clusterIPService("web", []string{"10.96.0.10"}, Port{Name: "http", Port: 80}), nil)
	want := map[string]string{
		"/skydns/arpa/in-addr/10/96/0/10":                           `{"host":"web.default.svc.cluster.local.","ttl":30,"owner":"kube2sky.cluster.local"}`,
		"/skydns/local/cluster/svc/default/web/4df22e82":            `{"host":"10.96.0.10","ttl":30,"owner":"kube2sky.cluster.local"}`,
		"/skydns/local/cluster/svc/default/web/_tcp/_http/0093fc5f": `{"host":"web.default.svc.cluster.local.","port":80,"ttl":30,"owner":"kube2sky.cluster.local"}`,
	}
	if len(entries) != len(want) {
		t.Fatalf("got %d entries, want %d: %v", len(entries), len(want), entries)
	}
	for _, e := range entries {
		if got := string(e.Record.Encode()); got != want[e.Key] {
			t.Errorf("%s = %s, want %s", e.Key, got, want[e.Key])
		}
	}
}

func TestHashLabelIsStable(t *testing.T) {
	for _, c := range []struct {
		host string
		port int
		want string
	}{
		{"10.96.0.10", 0, "4df22e82"},
		{"web.default.svc.cluster.local.", 80, "0093fc5f"},
	} {
		if got := HashLabel(c.host, c.port); got != c.want {
			t.Errorf("HashLabel(%q, %d) = %s, want %s", c.host, c.port, got, c.want)
		}
	}
}

func TestIPv6PTRKeyIsTheReversedNibbles(t *testing.T) {
	entries, _ := Build(testZone, clusterIPService("web", []string{"fd00::a"}), nil)
	const want = "/skydns/arpa/ip6/f/d/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/a"
	if entries[0].Key != want {
		t.Errorf("PTR key %s, want %s", entries[0].Key, want)
	}
}

func TestKeysAreTheReversedNames(t *testing.T) {
	z := NewZone("Cluster.Local.", "/skydns/", 0, "o")
	if got, want := z.ServiceKeyPrefix("default", "web"), contract.Key("/skydns", "web.default.svc.cluster.local.")+"/"; got != want {
		t.Errorf("ServiceKeyPrefix = %s, want %s", got, want)
	}
	if got, want := z.DNSVersionKey(), contract.Key("/skydns", "dns-version.cluster.local."); got != want {
		t.Errorf("DNSVersionKey = %s, want %s", got, want)
	}
	if got := z.ServiceFQDN("default", "web"); got != "web.default.svc.cluster.local." {
		t.Errorf("ServiceFQDN = %s", got)
	}
	if got := z.ZoneKeyPrefix(); got != "/skydns/local/cluster/" {
		t.Errorf("ZoneKeyPrefix = %s", got)
	}
}

func TestDNSVersionIsTheSchemaVersionTXT(t *testing.T) {
	e := testZone.DNSVersion()
	if e.Key != "/skydns/local/cluster/dns-version" {
		t.Errorf("key %s", e.Key)
	}
	if got := string(e.Record.Encode()); got != `{"text":"1.1.0","ttl":30,"owner":"kube2sky.cluster.local"}` {
		t.Errorf("value %s", got)
	}
}

func TestServiceOfKey(t *testing.T) {
	for _, c := range []struct {
		key, ns, name string
		ok            bool
	}{
		{"/skydns/local/cluster/svc/default/web/4df22e82", "default", "web", true},
		{"/skydns/local/cluster/svc/default/web/_tcp/_http/x", "default", "web", true},
		{"/skydns/local/cluster/svc/default/web", "", "", false},
		{"/skydns/local/cluster/svc/default/web/", "", "", false},
		{"/skydns/local/cluster/dns-version", "", "", false},
		{"/skydns/local/other/svc/default/web/x", "", "", false},
	} {
		ns, name, ok := testZone.ServiceOfKey(c.key)
		if ns != c.ns || name != c.name || ok != c.ok {
			t.Errorf("ServiceOfKey(%s) = %q %q %v, want %q %q %v", c.key, ns, name, ok, c.ns, c.name, c.ok)
		}
	}
}

func TestServiceOfTarget(t *testing.T) {
	for _, c := range []struct {
		host, ns, name string
		ok             bool
	}{
		{"web.default.svc.cluster.local.", "default", "web", true},
		{"db-0.db.default.svc.cluster.local.", "default", "db", true},
		{"DB-0.DB.Default.svc.cluster.local.", "default", "db", true},
		{"a.b.db.default.svc.cluster.local.", "", "", false},
		{"default.svc.cluster.local.", "", "", false},
		{"web.default.svc.other.local.", "", "", false},
		{".default.svc.cluster.local.", "", "", false},
	} {
		ns, name, ok := testZone.ServiceOfTarget(c.host)
		if ns != c.ns || name != c.name || ok != c.ok {
			t.Errorf("ServiceOfTarget(%s) = %q %q %v, want %q %q %v", c.host, ns, name, ok, c.ns, c.name, c.ok)
		}
	}
}

func TestDashedIP(t *testing.T) {
	for ip, want := range map[string]string{"10.244.1.7": "10-244-1-7", "fd00::7": "fd00--7", "::1": "--1"} {
		if got := DashedIP(netip.MustParseAddr(ip)); got != want {
			t.Errorf("DashedIP(%s) = %s, want %s", ip, got, want)
		}
	}
}
