package gendata_test

import (
	"bytes"
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/bench/gendata"
)

func TestZoneFileHoldsTheRecordsOfTheEtcdData(t *testing.T) {
	s := spec(2)
	var zone bytes.Buffer
	if err := gendata.WriteZone(&zone, s, gendata.Generate(s)); err != nil {
		t.Fatal(err)
	}
	var got []string
	zp := dns.NewZoneParser(&zone, "", "zone")
	for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
		got = append(got, rr.String())
	}
	if err := zp.Err(); err != nil {
		t.Fatalf("the zone file does not parse: %v\n%s", err, zone.String())
	}
	want := []string{
		"cluster.local.\t30\tIN\tSOA\tns.dns.cluster.local. hostmaster.cluster.local. 1 7200 1800 86400 30",
		"cluster.local.\t300\tIN\tNS\tns.dns.cluster.local.",
		"svc0.ns0.svc.cluster.local.\t300\tIN\tA\t10.96.0.1",
		"_http._tcp.svc0.ns0.svc.cluster.local.\t300\tIN\tSRV\t10 100 80 svc0.ns0.svc.cluster.local.",
		"svc1.ns1.svc.cluster.local.\t300\tIN\tA\t10.96.0.2",
		"_http._tcp.svc1.ns1.svc.cluster.local.\t300\tIN\tSRV\t10 100 80 svc1.ns1.svc.cluster.local.",
	}
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d:\n%s", len(got), len(want), zone.String())
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("record %d: %q, want %q", i, got[i], want[i])
		}
	}
}
