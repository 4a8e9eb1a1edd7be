package resolver_test

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/skydns/resolver"
	"github.com/kubesky/kubesky/skydns/snapshot/snapshottest"
)

func TestSearchPath(t *testing.T) {
	snap := snapshottest.Build(t, "/skydns", map[string]string{
		"/skydns/local/cluster/pod/shop/10-244-1-5": `{"host":"10.244.1.5"}`,
		"/skydns/local/cluster/pod/shop/fd00--5":    `{"host":"fd00::5"}`,
		"/skydns/local/cluster/pod/lies/10-244-1-6": `{"host":"10.244.9.9"}`,
	})
	verified, err := resolver.New(resolver.Config{Zones: []string{"cluster.local."}, Pods: resolver.PodsVerified})
	if err != nil {
		t.Fatal(err)
	}
	pod4, pod6 := netip.MustParseAddr("10.244.1.5"), netip.MustParseAddr("fd00::5")
	tests := []struct {
		name   string
		r      *resolver.Resolver
		qname  string
		client netip.Addr
		want   []string // nil: not a search-path query
	}{
		{"a pod's query under its namespace's search domain goes on down its search path", verified,
			"example.com.shop.svc.cluster.local.", pod4, []string{"example.com.svc.cluster.local.", "example.com.cluster.local.", "example.com."}},
		{"an IPv6 pod is known by its address too", verified,
			"Web.Other.SHOP.svc.cluster.local.", pod6, []string{"web.other.svc.cluster.local.", "web.other.cluster.local.", "web.other."}},
		{"an IPv4-mapped client address is the IPv4 pod", verified,
			"web.other.shop.svc.cluster.local.", netip.MustParseAddr("::ffff:10.244.1.5"), []string{"web.other.svc.cluster.local.", "web.other.cluster.local.", "web.other."}},
		{"a pod asking under another namespace is not searching", verified, "web.other.elsewhere.svc.cluster.local.", pod4, nil},
		{"a client that is no pod is not searching", verified, "web.other.shop.svc.cluster.local.", netip.MustParseAddr("10.244.1.7"), nil},
		{"a pod record holding another address proves nothing", verified, "web.lies.svc.cluster.local.", netip.MustParseAddr("10.244.1.6"), nil},
		{"the namespace's own name has no base to search for", verified, "shop.svc.cluster.local.", pod4, nil},
		{"a name outside svc.<zone> is not searching", verified, "web.shop.pod.cluster.local.", pod4, nil},
		{"without verified pod records no client is known", newResolver(t), "example.com.shop.svc.cluster.local.", pod4, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.r.SearchPath(snap, tt.qname, tt.client)
			if ok != (tt.want != nil) || !slices.Equal(got, tt.want) {
				t.Errorf("SearchPath(%s, %s) = %q, %v; want %q", tt.qname, tt.client, got, ok, tt.want)
			}
		})
	}
}

func TestAutopathAnswer(t *testing.T) {
	r, snap := newResolver(t), clusterSnapshot(t)
	req := new(dns.Msg).SetQuestion("web.Default.shop.svc.cluster.local.", dns.TypeA)
	req.Id = 4242
	step := r.Resolve(snap, new(dns.Msg).SetQuestion("web.default.svc.cluster.local.", dns.TypeA))
	checkResponse(t, req, r.Autopath(req, step), testCase{
		answer: []string{
			"web.Default.shop.svc.cluster.local. 30 IN CNAME web.default.svc.cluster.local.",
			"web.default.svc.cluster.local. 30 IN A 10.96.0.1",
		},
	})
}
