package records

import (
	"slices"
	"testing"
)

func TestNameServers(t *testing.T) {
	cases := []struct {
		name string
		svc  Service
		want []string // "<key below /skydns/local/cluster/> <host>"
	}{
		{"one cluster IP is ns1", clusterIPService("kube-dns", []string{"10.96.0.10"}),
			[]string{"dns/ns/ns1 10.96.0.10"}},
		{"dual stack: one name server per family, the primary first", clusterIPService("kube-dns", []string{"fd00:10:96::a", "10.96.0.10"}),
			[]string{"dns/ns/ns1 fd00:10:96::a", "dns/ns/ns2 10.96.0.10"}},
		{"an unusable address is skipped, the next one numbered on", clusterIPService("kube-dns", []string{"127.0.0.1", "bogus", "10.96.0.10"}),
			[]string{"dns/ns/ns1 10.96.0.10"}},
		{"no cluster IP allocated yet", clusterIPService("kube-dns", nil), nil},
		{"a headless Service", clusterIPService("kube-dns", []string{ClusterIPNone}), nil},
		{"an ExternalName Service", withType(clusterIPService("kube-dns", nil), TypeExternalName), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, e := range NameServers(testZone, c.svc) {
				if e.Record.Owner != testOwner || e.Record.TTL != 30 {
					t.Errorf("%s: owner %q ttl %d, want the zone's", e.Key, e.Record.Owner, e.Record.TTL)
				}
				if err := testZone.CheckEntry(e); err != nil {
					t.Errorf("%s: %v", e.Key, err)
				}
				got = append(got, e.Key[len("/skydns/local/cluster/"):]+" "+e.Record.Host)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}
