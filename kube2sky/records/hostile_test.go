package records

import (
	"fmt"
	"strings"
	"testing"
)

// Objects a current API server rejects, but an older or laxer one, or a
// fuzzed object, may carry. Build must turn each into Problems and write
// only valid records.

// label63 returns a DNS label of exactly 63 characters starting with c.
func label63(c string) string { return c + strings.Repeat("x", 62) }

var (
	longNS   = label63("n")
	longSvc  = label63("s")
	longHost = label63("h")
	longFQDN = longSvc + "." + longNS + ".svc.cluster.local."
)

var hostileCases = []buildCase{
	{
		name: "unusable endpoint addresses are no A records; the usable one is",
		svc:  headlessService("db"),
		slices: []EndpointSlice{
			slice("db", "v4", "IPv4", nil, readyAt("0.0.0.0", "127.0.0.1", "169.254.1.1", "239.1.2.3", "255.255.255.255", "::ffff:10.1.2.3", "10.1.2.3")...),
			slice("db", "v6", "IPv6", nil, readyAt("::", "::1", "fe80::1", "ff02::1", "::ffff:10.1.2.4", "fe80::1%eth0")...),
		},
		want: []string{"arpa/in-addr/10/1/2/3 10-1-2-3.db.default.svc.cluster.local.", "svc/default/db/10-1-2-3 10.1.2.3"},
		problems: []string{
			`v4: endpoints[0].addresses[0] "0.0.0.0": the unspecified address`,
			`"127.0.0.1": a loopback address`, `"169.254.1.1": a link-local address`, `"239.1.2.3": a multicast address`,
			`"255.255.255.255": the broadcast address`, `"::ffff:10.1.2.3": an IPv4-mapped IPv6 address`,
			`v6: endpoints[0].addresses[0] "::": the unspecified address`, `"::1": a loopback address`,
			`"fe80::1": a link-local address`, `"ff02::1": a multicast address`, `"::ffff:10.1.2.4": an IPv4-mapped IPv6 address`,
			`"fe80::1%eth0": an address with a zone`,
		},
	},
	{
		name:     "unusable cluster IPs are no A records",
		svc:      clusterIPService("web", []string{"127.0.0.1", "::ffff:10.96.0.1"}, Port{Name: "http", Port: 80}),
		problems: []string{`spec.clusterIPs[0] "127.0.0.1": a loopback address`, `spec.clusterIPs[1] "::ffff:10.96.0.1": an IPv4-mapped IPv6 address`},
	},
	{
		name: "one address listed five times in one slice is written once",
		svc:  headlessService("db", Port{Name: "pg", Port: 5432}),
		slices: []EndpointSlice{slice("db", "dup", "IPv4", []Port{{Name: "pg", Port: 5432}, {Name: "pg", Port: 5432}},
			readyAt("10.244.1.7", "10.244.1.7", "10.244.1.7", "10.244.1.7", "10.244.1.7")...)},
		want: []string{
			"arpa/in-addr/10/244/1/7 10-244-1-7.db.default.svc.cluster.local.",
			"svc/default/db/10-244-1-7 10.244.1.7",
			"svc/default/db/_tcp/_pg/10-244-1-7 10-244-1-7.db.default.svc.cluster.local. port=5432",
		},
	},
	{
		name: "unicode, upper-case and too long port names get no SRV record",
		svc: clusterIPService("web", []string{"10.96.0.10"},
			Port{Name: "pört", Port: 1}, Port{Name: "HTTP", Port: 2}, Port{Name: "ｈｔｔｐ", Port: 3},
			Port{Name: "http\u200b", Port: 4}, Port{Name: label63("p") + "x", Port: 5}, Port{Name: "ok", Port: 6}),
		want: []string{
			"arpa/in-addr/10/96/0/10 web.default.svc.cluster.local.",
			"svc/default/web/_tcp/_ok/{web.default.svc.cluster.local.:6} web.default.svc.cluster.local. port=6",
			"svc/default/web/{10.96.0.10} 10.96.0.10",
		},
		problems: []string{"spec.ports[0]", "not a DNS label", "spec.ports[1]", "spec.ports[2]", "spec.ports[3]", "spec.ports[4]"},
	},
	{
		name: "names at the limits are written, and an SRV name over 253 characters is a Problem",
		svc:  Service{Namespace: longNS, Name: longSvc, Type: TypeClusterIP, ClusterIPs: []string{ClusterIPNone}},
		slices: []EndpointSlice{{Namespace: longNS, Name: "long", Service: longSvc, AddressType: "IPv4",
			Ports:     []Port{{Name: "abcdefghijklmno", Protocol: "SCTP", Port: 1}, {Name: label63("p"), Protocol: "SCTP", Port: 2}},
			Endpoints: []Endpoint{{Addresses: []string{"10.244.1.7"}, Hostname: longHost, Ready: true}},
		}},
		want: []string{
			"arpa/in-addr/10/244/1/7 " + longHost + "." + longFQDN,
			"svc/" + longNS + "/" + longSvc + "/" + longHost + " 10.244.1.7",
			"svc/" + longNS + "/" + longSvc + "/_sctp/_abcdefghijklmno/" + longHost + " " + longHost + "." + longFQDN + " port=1",
		},
		problems: []string{`Service ` + longNS + "/" + longSvc + `: record "/skydns/local/cluster/svc/` + longNS + "/" + longSvc + "/_sctp/_" + label63("p"),
			"name of 280 characters, longer than 253"},
	},
}

func TestBuildHostileObjects(t *testing.T) {
	runBuildCases(t, testZone, hostileCases)
}

// readyAt returns one ready endpoint per address.
func readyAt(addrs ...string) []Endpoint {
	out := make([]Endpoint, len(addrs))
	for i, a := range addrs {
		out[i] = Endpoint{Addresses: []string{a}, Ready: true}
	}
	return out
}

func TestBuildInALongZone(t *testing.T) {
	domain := label63("a") + "." + label63("b") + "." + label63("c") + ".cluster.local"
	zone := NewZone(domain, "/skydns", 30, testOwner)
	key := "/skydns/local/cluster/" + label63("c") + "/" + label63("b") + "/" + label63("a") + "/svc/"
	runBuildCases(t, zone, []buildCase{
		{
			name: "a Service whose name would be longer than 253 characters has no records",
			svc:  Service{Namespace: longNS, Name: longSvc, Type: TypeClusterIP, ClusterIPs: []string{"10.96.0.10"}},
			problems: []string{fmt.Sprintf("metadata.name %q: the Service's name %s.%s.svc.%s. is longer than 253 characters",
				longSvc, longSvc, longNS, domain)},
		},
		{
			name: "an endpoint whose name would be longer than 253 characters has no records",
			svc:  headlessService("db"),
			slices: []EndpointSlice{slice("db", "db-a", "IPv4", nil,
				Endpoint{Addresses: []string{"10.244.1.7"}, Hostname: longHost, Ready: true},
				Endpoint{Addresses: []string{"10.244.1.8"}, Ready: true})},
			want: []string{
				"/skydns/arpa/in-addr/10/244/1/8 10-244-1-8.db.default.svc." + domain + ".",
				key + "default/db/10-244-1-8 10.244.1.8",
			},
			problems: []string{`EndpointSlice default/db-a: endpoints[0] "` + longHost + ".db.default.svc", "the endpoint's name is longer than 253 characters"},
		},
	})
}

func TestBuildAThousandPorts(t *testing.T) {
	var ports []Port
	for i := range 1000 {
		ports = append(ports, Port{Name: fmt.Sprintf("p%d", i), Protocol: []string{"TCP", "UDP"}[i%2], Port: int32(1 + i)})
	}
	entries, problems := Build(testZone, clusterIPService("many", []string{"10.96.0.10"}, ports...), nil)
	if len(problems) != 0 {
		t.Fatalf("problems: %v", problems)
	}
	if len(entries) != 1002 {
		t.Fatalf("%d records, want 1002 (an A, a PTR and 1000 SRV)", len(entries))
	}
	checkEntries(t, testZone, clusterIPService("many", nil), entries)
}

func TestCheckEntry(t *testing.T) {
	base := "/skydns/local/cluster/svc/default/web/"
	cases := []struct {
		key, value, err string
	}{
		{base + "a1b2c3d4", `{"host":"10.96.0.10"}`, ""},
		{base + "_tcp/_http/x", `{"host":"web.default.svc.cluster.local.","port":80}`, ""},
		{"/skydns/local/cluster/dns-version", `{"text":"1.1.0"}`, ""},
		{"/skydns/arpa/in-addr/10/96/0/10", `{"host":"web.default.svc.cluster.local."}`, ""},
		{"/other/local/cluster/x", `{"host":"10.0.0.1"}`, "outside"},
		{"/skydns/com/example/x", `{"host":"10.0.0.1"}`, "outside"},
		{base + "Web", `{"host":"10.0.0.1"}`, `character 'W'`},
		{base + "a.b", `{"host":"10.0.0.1"}`, `character '.'`},
		{base + "a//b", `{"host":"10.0.0.1"}`, "empty label"},
		{base + "a/", `{"host":"10.0.0.1"}`, "empty label"},
		{base + "*", `{"host":"10.0.0.1"}`, `character '*'`},
		{base + label63("x") + "x", `{"host":"10.0.0.1"}`, "label of 64 characters"},
		{base + strings.Repeat("abcdefg/", 30) + "x", `{"host":"10.0.0.1"}`, "longer than 253"},
		{base + "x", `{"host":"127.0.0.1"}`, "loopback"},
		{base + "x", `{"host":"web.default"}`, "neither an IP address nor a fully qualified name"},
		{base + "x", `{"host":"Web.default."}`, `character 'W'`},
		{base + "x", `{"host":"web..default."}`, "empty label"},
		{base + "x", `{"port":80}`, "neither host nor text"},
		{base + "x", `{"host":"10.0.0.1","port":70000}`, "out of range"},
		{base + "x", `not json`, "invalid record JSON"},
	}
	for _, c := range cases {
		err := testZone.CheckKeyValue(c.key, []byte(c.value))
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s = %s: %v", c.key, c.value, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s = %s: error %v, want one containing %q", c.key, c.value, err, c.err)
		}
	}
}
