package records

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kubesky/kubesky/etcdstore"
)

// FuzzBuild checks properties every output must have, whatever the input:
// keys sorted, unique and under the zone or the reverse prefix, values that
// decode as records, forward keys inside the Service's subtree, PTR targets
// naming the Service, and the same output for the slices in any order.
func FuzzBuild(f *testing.F) {
	f.Add("default", "web", "ClusterIP", "10.96.0.10", "fd00::a", "", "http", "TCP", int32(80), "db-0", "10.244.1.7", "IPv4", true, false)
	f.Add("default", "db", "ClusterIP", "None", "", "", "pg", "UDP", int32(5432), "", "fd00::7", "IPv6", false, true)
	f.Add("default", "ext", "ExternalName", "", "", "Example.COM.", "x", "SCTP", int32(1), "h", "1.2.3.4", "IPv4", true, false)
	f.Add("a.b", "Web", "Magic", "::ffff:1.2.3.4", "fe80::1%eth0", "1.2.3.4", "Bad_Name", "QUIC", int32(-1), "-", "x", "FQDN", true, true)
	f.Fuzz(func(t *testing.T, ns, name, typ, ip1, ip2, ext, portName, proto string, port int32, hostname, addr, addrType string, ready, publish bool) {
		svc := Service{
			Namespace: ns, Name: name, Type: typ, ClusterIPs: []string{ip1, ip2}, ExternalName: ext,
			PublishNotReadyAddresses: publish, Ports: []Port{{Name: portName, Protocol: proto, Port: port}},
		}
		ports := []Port{{Name: portName, Protocol: proto, Port: port}}
		sl := []EndpointSlice{
			{Namespace: ns, Name: "a", Service: name, AddressType: addrType, Ports: ports, Endpoints: []Endpoint{
				{Addresses: []string{addr, ip1}, Hostname: hostname, Ready: ready},
				{Addresses: []string{ip2}, Ready: true},
			}},
			{Namespace: ns, Name: "b", Service: name, AddressType: addrType, Ports: ports, Endpoints: []Endpoint{
				{Addresses: []string{addr}, Hostname: portName, Ready: !ready},
			}},
		}
		entries, _ := Build(testZone, svc, sl)
		checkEntries(t, svc, entries)
		reversed := []EndpointSlice{sl[1], sl[0]}
		again, _ := Build(testZone, svc, reversed)
		if !reflect.DeepEqual(entries, again) {
			t.Fatalf("slice order changed the output:\n%v\n%v", entries, again)
		}
	})
}

func checkEntries(t *testing.T, svc Service, entries []Entry) {
	t.Helper()
	if !slices.IsSortedFunc(entries, func(a, b Entry) int { return strings.Compare(a.Key, b.Key) }) {
		t.Fatalf("entries not sorted: %v", entries)
	}
	base := testZone.ServiceKeyPrefix(svc.Namespace, svc.Name)
	for i, e := range entries {
		if i > 0 && entries[i-1].Key == e.Key {
			t.Fatalf("key %s twice", e.Key)
		}
		if strings.Contains(e.Key, "//") || e.Key != strings.ToLower(e.Key) {
			t.Fatalf("malformed key %q", e.Key)
		}
		if _, err := etcdstore.Decode(e.Key, e.Record.Encode()); err != nil {
			t.Fatalf("value does not decode: %v", err)
		}
		checkPlacement(t, svc, base, e)
	}
}

func checkPlacement(t *testing.T, svc Service, base string, e Entry) {
	t.Helper()
	if !testZone.IsReverseKey(e.Key) {
		if !strings.HasPrefix(e.Key, base) {
			t.Fatalf("key %s outside %s", e.Key, base)
		}
		return
	}
	if ns, name, ok := testZone.ServiceOfTarget(e.Record.Host); !ok || ns != svc.Namespace || name != svc.Name {
		t.Fatalf("PTR %s -> %s does not name %s", e.Key, e.Record.Host, svc.Key())
	}
}
