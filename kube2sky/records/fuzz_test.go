package records

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// FuzzBuild checks properties every output must have, whatever the input:
// keys sorted, unique and under the zone or the reverse prefix, every key
// and value one kube2sky may write (Zone.CheckKeyValue: names within the
// length limits, hosts that are usable addresses or valid names), forward
// keys inside the Service's subtree, PTR targets naming the Service, and the
// same output for the slices in any order. The zone is cluster.local below
// zoneLabels labels of 63 characters, so that names can overflow.
func FuzzBuild(f *testing.F) {
	long := strings.Repeat("l", 63)
	f.Add(uint8(0), "default", "web", "ClusterIP", "10.96.0.10", "fd00::a", "", "http", "TCP", int32(80), "db-0", "10.244.1.7", "IPv4", true, false)
	f.Add(uint8(0), "default", "db", "ClusterIP", "None", "", "", "pg", "UDP", int32(5432), "", "fd00::7", "IPv6", false, true)
	f.Add(uint8(0), "default", "ext", "ExternalName", "", "", "Example.COM.", "x", "SCTP", int32(1), "h", "1.2.3.4", "IPv4", true, false)
	f.Add(uint8(0), "a.b", "Web", "Magic", "::ffff:1.2.3.4", "fe80::1%eth0", "1.2.3.4", "Bad_Name", "QUIC", int32(-1), "-", "x", "FQDN", true, true)
	f.Add(uint8(0), long, long, "ClusterIP", "None", "", "", long, "SCTP", int32(9), long, "::ffff:10.0.0.1", "IPv6", true, false)
	f.Add(uint8(1), long, long, "NodePort", "10.96.0.1", "", "", "p\u00f6rt", "UDP", int32(9), "", "239.1.1.1", "IPv4", true, false)
	f.Add(uint8(2), "a", "b", "ClusterIP", "None", "", "", "http", "TCP", int32(80), long, "10.1.1.1", "IPv4", true, false)
	f.Fuzz(func(t *testing.T, zoneLabels uint8, ns, name, typ, ip1, ip2, ext, portName, proto string, port int32, hostname, addr, addrType string, ready, publish bool) {
		zone := fuzzZone(zoneLabels)
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
		entries, _ := Build(zone, svc, sl)
		checkEntries(t, zone, svc, entries)
		reversed := []EndpointSlice{sl[1], sl[0]}
		again, _ := Build(zone, svc, reversed)
		if !reflect.DeepEqual(entries, again) {
			t.Fatalf("slice order changed the output:\n%v\n%v", entries, again)
		}
	})
}

// fuzzZone returns cluster.local below n%4 labels of 63 characters: a zone
// of up to 205 characters, below which most names overflow.
func fuzzZone(n uint8) Zone {
	domain := "cluster.local"
	for range n % 4 {
		domain = strings.Repeat("z", 63) + "." + domain
	}
	return NewZone(domain, "/skydns", 30, testOwner)
}

func checkEntries(t *testing.T, z Zone, svc Service, entries []Entry) {
	t.Helper()
	if !slices.IsSortedFunc(entries, func(a, b Entry) int { return strings.Compare(a.Key, b.Key) }) {
		t.Fatalf("entries not sorted: %v", entries)
	}
	base := z.ServiceKeyPrefix(svc.Namespace, svc.Name)
	for i, e := range entries {
		if i > 0 && entries[i-1].Key == e.Key {
			t.Fatalf("key %s twice", e.Key)
		}
		if err := z.CheckKeyValue(e.Key, e.Record.Encode()); err != nil {
			t.Fatalf("invalid record: %v", err)
		}
		checkPlacement(t, z, svc, base, e)
	}
}

func checkPlacement(t *testing.T, z Zone, svc Service, base string, e Entry) {
	t.Helper()
	if !z.IsReverseKey(e.Key) {
		if !strings.HasPrefix(e.Key, base) {
			t.Fatalf("key %s outside %s", e.Key, base)
		}
		return
	}
	if ns, name, ok := z.ServiceOfTarget(e.Record.Host); !ok || ns != svc.Namespace || name != svc.Name {
		t.Fatalf("PTR %s -> %s does not name %s", e.Key, e.Record.Host, svc.Key())
	}
}
