package clusterset

import (
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestAnExportRoundTrips(t *testing.T) {
	in := Export{
		Created:         time.Date(2026, 11, 29, 2, 0, 0, 0, time.UTC),
		Type:            Headless,
		Ports:           []Port{{Name: "http", Protocol: "TCP", Port: 80}},
		Endpoints:       []Endpoint{{Hostname: "web-0", Addresses: []netip.Addr{netip.MustParseAddr("10.1.0.7")}}},
		EndpointPorts:   []Port{{Name: "http", Protocol: "TCP", Port: 8080}},
		SessionAffinity: "ClientIP", AffinityTimeout: 600, IPFamilies: []string{"IPv4"},
		InternalTrafficPolicy: "Local", TrafficDistribution: "PreferClose",
	}
	out, err := DecodeExport("k", in.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if string(out.Encode()) != string(in.Encode()) {
		t.Errorf("round trip changed the export: %s", out.Encode())
	}
}

func TestAMalformedExportIsAnErrorNamingTheKey(t *testing.T) {
	cases := map[string]string{
		"not JSON":           `{"created":`,
		"no created time":    `{"type":"Headless"}`,
		"unknown type":       `{"created":"2026-01-01T00:00:00Z","type":"NodePort"}`,
		"bad protocol":       `{"created":"2026-01-01T00:00:00Z","type":"Headless","ports":[{"protocol":"ICMP","port":1}]}`,
		"port zero":          `{"created":"2026-01-01T00:00:00Z","type":"Headless","ports":[{"protocol":"TCP","port":0}]}`,
		"bad port name":      `{"created":"2026-01-01T00:00:00Z","type":"Headless","ports":[{"name":"Web_","protocol":"TCP","port":80}]}`,
		"bad hostname":       `{"created":"2026-01-01T00:00:00Z","type":"Headless","endpoints":[{"hostname":"a.b","addresses":["10.0.0.1"]}]}`,
		"no address":         `{"created":"2026-01-01T00:00:00Z","type":"Headless","endpoints":[{"hostname":"a"}]}`,
		"bad address":        `{"created":"2026-01-01T00:00:00Z","type":"Headless","endpoints":[{"hostname":"a","addresses":["10.0.0.300"]}]}`,
		"trailing data":      `{"created":"2026-01-01T00:00:00Z","type":"Headless"} {}`,
		"bad affinity":       `{"created":"2026-01-01T00:00:00Z","type":"ClusterSetIP","sessionAffinity":"Sticky"}`,
		"bad timeout":        `{"created":"2026-01-01T00:00:00Z","type":"ClusterSetIP","sessionAffinity":"ClientIP","affinityTimeoutSeconds":-1}`,
		"bad family":         `{"created":"2026-01-01T00:00:00Z","type":"ClusterSetIP","ipFamilies":["IPv5"]}`,
		"three families":     `{"created":"2026-01-01T00:00:00Z","type":"ClusterSetIP","ipFamilies":["IPv4","IPv6","IPv4"]}`,
		"bad traffic policy": `{"created":"2026-01-01T00:00:00Z","type":"ClusterSetIP","internalTrafficPolicy":"Node"}`,
		"bad distribution":   `{"created":"2026-01-01T00:00:00Z","type":"ClusterSetIP","trafficDistribution":"Anywhere"}`,
		"bad target port":    `{"created":"2026-01-01T00:00:00Z","type":"ClusterSetIP","endpointPorts":[{"protocol":"TCP","port":70000}]}`,
	}
	for name, value := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := DecodeExport("/clusterset/exports/a/ns/web", []byte(value))
			if err == nil || !strings.Contains(err.Error(), `"/clusterset/exports/a/ns/web"`) {
				t.Errorf("DecodeExport(%s) = %v, want an error naming the key", value, err)
			}
		})
	}
}

func TestAnImportHoldsOneOrTwoIPs(t *testing.T) {
	if _, err := DecodeImport("k", []byte(`{"ips":["242.0.0.7","fd00::7"]}`)); err != nil {
		t.Errorf("two ips: %v", err)
	}
	for _, bad := range []string{`{"ips":[]}`, `{"ips":["1.1.1.1","1.1.1.2","1.1.1.3"]}`, `{"ips":["x"]}`} {
		if _, err := DecodeImport("k", []byte(bad)); err == nil {
			t.Errorf("DecodeImport(%s) accepted it", bad)
		}
	}
}

func TestKeysRoundTrip(t *testing.T) {
	id := ExportID{Cluster: "east", ServiceName: ServiceName{Namespace: "shop", Name: "web"}}
	key := ExportKey("/clusterset/", id)
	if key != "/clusterset/exports/east/shop/web" {
		t.Fatalf("ExportKey = %q", key)
	}
	got, err := ParseExportKey("/clusterset", key)
	if err != nil || got != id {
		t.Errorf("ParseExportKey(%q) = %v, %v", key, got, err)
	}
	if key := ImportKey("/clusterset", id); key != "/clusterset/imports/east/shop/web" {
		t.Errorf("ImportKey = %q", key)
	}
	imp, err := ParseImportKey("/clusterset", ImportKey("/clusterset", id))
	if err != nil || imp != id {
		t.Errorf("ParseImportKey = %v, %v", imp, err)
	}
	if _, err := ParseImportKey("/clusterset", "/clusterset/imports/shop/web"); err == nil {
		t.Error("ParseImportKey accepted an import key without a cluster")
	}
	for _, bad := range []string{"/clusterset/exports/east/shop", "/clusterset/exports/East/shop/web", "/clusterset/exports/a.b/shop/web", "/other/exports/a/b/c"} {
		if _, err := ParseExportKey("/clusterset", bad); err == nil {
			t.Errorf("ParseExportKey(%q) accepted it", bad)
		}
	}
}

func TestDashedName(t *testing.T) {
	for addr, want := range map[string]string{"10.1.0.7": "10-1-0-7", "fd00::7": "fd00--7"} {
		if got := DashedName(netip.MustParseAddr(addr)); got != want {
			t.Errorf("DashedName(%s) = %q, want %q", addr, got, want)
		}
	}
}

func TestOverlaps(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{{"/clusterset", "/skydns", false}, {"/skydns", "/skydns/x", true}, {"/skydns-east", "/skydns", false}, {"/a/", "/a", true}} {
		if got := Overlaps(c.a, c.b); got != c.want {
			t.Errorf("Overlaps(%q, %q) = %v", c.a, c.b, got)
		}
	}
}
