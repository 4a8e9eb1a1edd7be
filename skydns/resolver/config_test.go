package resolver_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/skydns/resolver"
	"github.com/kubesky/kubesky/skydns/snapshot/snapshottest"
)

func TestNewRejectsBadZones(t *testing.T) {
	tests := []struct {
		name    string
		zones   []string
		wantErr string
	}{
		{"no zone at all", nil, "no zone"},
		{"the root zone", []string{"."}, `zone "."`},
		{"a zone with a slash", []string{"clu/ster.local."}, `zone "clu/ster.local."`},
		{"a zone with an empty label", []string{"cluster..local"}, `zone "cluster..local"`},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is an error", func(t *testing.T) {
			_, err := resolver.New(resolver.Config{Zones: tt.zones})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("New(%q) error = %v, want one containing %q", tt.zones, err, tt.wantErr)
			}
		})
	}
}

func TestZones(t *testing.T) {
	r, err := resolver.New(resolver.Config{Zones: []string{"Cluster.Local", "svc.cluster.local.", "cluster.local."}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"svc.cluster.local.", "cluster.local.", "in-addr.arpa.", "ip6.arpa."}
	if got := r.Zones(); !slices.Equal(got, want) {
		t.Errorf("Zones() = %q, want %q (normalized, deduplicated, longest first)", got, want)
	}
	tests := []struct{ qname, want string }{
		{"web.default.SVC.cluster.local.", "svc.cluster.local."},
		{"svc.cluster.local.", "svc.cluster.local."},
		{"pod.cluster.local.", "cluster.local."},
		{"CLUSTER.LOCAL.", "cluster.local."},
		{"1.0.0.10.in-addr.arpa.", "in-addr.arpa."},
		{"example.com.", ""},
		{"xcluster.local.", ""},
	}
	for _, tt := range tests {
		got, ok := r.Zone(tt.qname)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("Zone(%q) = %q, %v; want %q", tt.qname, got, ok, tt.want)
		}
	}
}

func TestConfiguredTTLAndPrefix(t *testing.T) {
	r, err := resolver.New(resolver.Config{Zones: []string{"cluster.local."}, Prefix: "/custom/", TTL: 10})
	if err != nil {
		t.Fatal(err)
	}
	snap := snapshottest.Build(t, "/custom", map[string]string{
		"/custom/local/cluster/svc/default/web/a1": `{"host":"10.96.0.1","port":80}`,
	})
	runCases(t, r, snap, []testCase{
		{
			name:  "records without a ttl get the configured one, and targets are named under the configured prefix",
			qname: "web.default.svc.cluster.local.", qtype: dns.TypeSRV,
			answer: []string{"web.default.svc.cluster.local. 10 IN SRV 10 100 80 a1.web.default.svc.cluster.local."},
			extra:  []string{"a1.web.default.svc.cluster.local. 10 IN A 10.96.0.1"},
		},
		{
			name: "the SOA minimum and negative TTL are the configured TTL", qname: "nope.cluster.local.", qtype: dns.TypeA,
			rcode: dns.RcodeNameError,
			ns:    []string{"cluster.local. 10 IN SOA ns.dns.cluster.local. hostmaster.cluster.local. 1 7200 1800 86400 10"},
		},
	})
}

func TestMaxTTL(t *testing.T) {
	records := map[string]string{
		"/skydns/local/cluster/svc/default/web/a1": `{"host":"10.96.0.1","port":80,"ttl":901209123}`,
		"/skydns/local/cluster/short/a":            `{"host":"10.96.0.2","ttl":20}`,
	}
	snap := snapshottest.Build(t, "/skydns", records)
	runCases(t, newResolver(t), snap, []testCase{
		{
			name:  "a record's TTL above an hour is served as an hour by default",
			qname: "web.default.svc.cluster.local.", qtype: dns.TypeA,
			answer: []string{"web.default.svc.cluster.local. 3600 IN A 10.96.0.1"},
		},
		{
			name:  "and so is it in an SRV answer and its glue",
			qname: "web.default.svc.cluster.local.", qtype: dns.TypeSRV,
			answer: []string{"web.default.svc.cluster.local. 3600 IN SRV 10 100 80 a1.web.default.svc.cluster.local."},
			extra:  []string{"a1.web.default.svc.cluster.local. 3600 IN A 10.96.0.1"},
		},
	})

	capped, err := resolver.New(resolver.Config{Zones: []string{"cluster.local."}, TTL: 300, MaxTTL: 60})
	if err != nil {
		t.Fatal(err)
	}
	runCases(t, capped, snap, []testCase{
		{
			name:  "a record's TTL is capped at the configured largest",
			qname: "web.default.svc.cluster.local.", qtype: dns.TypeA,
			answer: []string{"web.default.svc.cluster.local. 60 IN A 10.96.0.1"},
		},
		{
			name:  "a TTL below the cap is kept",
			qname: "short.cluster.local.", qtype: dns.TypeA,
			answer: []string{"short.cluster.local. 20 IN A 10.96.0.2"},
		},
		{
			name: "the SOA's TTL and minimum, the negative TTL, are capped too", qname: "nope.cluster.local.", qtype: dns.TypeA,
			rcode: dns.RcodeNameError,
			ns:    []string{"cluster.local. 60 IN SOA ns.dns.cluster.local. hostmaster.cluster.local. 1 7200 1800 86400 60"},
		},
	})
}
