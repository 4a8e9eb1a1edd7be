package resolver_test

import (
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/skydns/resolver"
	"github.com/kubesky/kubesky/skydns/snapshot"
	"github.com/kubesky/kubesky/skydns/snapshot/snapshottest"
)

// podRecords is what kube2sky writes with --pod-records=verified for two
// pods in default (one dual-stack) and one in the namespace "any", plus
// an ExternalName-style alias to a pod name.
var podRecords = map[string]string{
	"/skydns/local/cluster/pod/default/10-244-1-5": `{"host":"10.244.1.5","owner":"kube2sky"}`,
	"/skydns/local/cluster/pod/default/fd00--5":    `{"host":"fd00::5","owner":"kube2sky"}`,
	"/skydns/local/cluster/pod/any/10-244-9-9":     `{"host":"10.244.9.9"}`,
	"/skydns/local/cluster/pod/default/text":       `{"text":"not an address"}`,
	"/skydns/local/cluster/svc/default/topod/x1":   `{"host":"10-244-1-5.default.pod.cluster.local."}`,
	"/skydns/local/example/pod/ns/1-2-3-4":         `{"host":"10.9.9.9"}`,
}

func podResolver(t testing.TB, mode resolver.PodMode) (*resolver.Resolver, *snapshot.Snapshot) {
	t.Helper()
	r, err := resolver.New(resolver.Config{Zones: []string{"cluster.local.", "example.local."}, Pods: mode})
	if err != nil {
		t.Fatal(err)
	}
	return r, snapshottest.Build(t, "/skydns", podRecords)
}

func TestPodRecordsDisabled(t *testing.T) {
	for _, mode := range []resolver.PodMode{"", resolver.PodsDisabled} {
		r, snap := podResolver(t, mode)
		runCases(t, r, snap, []testCase{
			{name: "a pod name is NXDOMAIN although its record exists", qname: "10-244-1-5.default.pod.cluster.local.", qtype: dns.TypeA, rcode: dns.RcodeNameError, ns: []string{soa}},
			{name: "the pod namespace is NXDOMAIN", qname: "default.pod.cluster.local.", qtype: dns.TypeA, rcode: dns.RcodeNameError, ns: []string{soa}},
			{name: "pod.<zone> itself is NXDOMAIN", qname: "pod.cluster.local.", qtype: dns.TypeANY, rcode: dns.RcodeNameError, ns: []string{soa}},
			{name: "an alias to a pod name dangles, so it is NODATA", qname: "topod.default.svc.cluster.local.", qtype: dns.TypeA, ns: []string{soa}},
		})
	}
}

func TestPodRecordsInsecure(t *testing.T) {
	r, snap := podResolver(t, resolver.PodsInsecure)
	runCases(t, r, snap, []testCase{
		{name: "a dashed IPv4 name in any namespace is its address", qname: "1-2-3-4.anything.pod.cluster.local.", qtype: dns.TypeA,
			answer: []string{"1-2-3-4.anything.pod.cluster.local. 30 IN A 1.2.3.4"}},
		{name: "the answer is owned by the name as asked", qname: "10-244-1-5.Default.POD.cluster.local.", qtype: dns.TypeA,
			answer: []string{"10-244-1-5.Default.POD.cluster.local. 30 IN A 10.244.1.5"}},
		{name: "a dashed IPv6 name is its AAAA", qname: "fd00--1.ns.pod.cluster.local.", qtype: dns.TypeAAAA,
			answer: []string{"fd00--1.ns.pod.cluster.local. 30 IN AAAA fd00::1"}},
		{name: "a full IPv6 form works too", qname: "2001-db8-0-0-0-0-0-a.ns.pod.cluster.local.", qtype: dns.TypeAAAA,
			answer: []string{"2001-db8-0-0-0-0-0-a.ns.pod.cluster.local. 30 IN AAAA 2001:db8::a"}},
		{name: "AAAA of an IPv4 pod is NODATA", qname: "1-2-3-4.ns.pod.cluster.local.", qtype: dns.TypeAAAA, ns: []string{soa}},
		{name: "A of an IPv6 pod is NODATA", qname: "fd00--1.ns.pod.cluster.local.", qtype: dns.TypeA, ns: []string{soa}},
		{name: "SRV of a pod is NODATA", qname: "1-2-3-4.ns.pod.cluster.local.", qtype: dns.TypeSRV, ns: []string{soa}},
		{name: "TXT of a pod is NODATA", qname: "1-2-3-4.ns.pod.cluster.local.", qtype: dns.TypeTXT, ns: []string{soa}},
		{name: "ANY of a pod is the minimal HINFO", qname: "1-2-3-4.ns.pod.cluster.local.", qtype: dns.TypeANY,
			answer: []string{`1-2-3-4.ns.pod.cluster.local. 30 IN HINFO "RFC8482" ""`}},
		{name: "a namespace under pod is an empty non-terminal: NODATA", qname: "ns.pod.cluster.local.", qtype: dns.TypeA, ns: []string{soa}},
		{name: "pod.<zone> is an empty non-terminal: NODATA", qname: "pod.cluster.local.", qtype: dns.TypeA, ns: []string{soa}},
		{name: "three dashes that are not an address are NXDOMAIN", qname: "256-1-1-1.ns.pod.cluster.local.", qtype: dns.TypeA, rcode: dns.RcodeNameError, ns: []string{soa}},
		{name: "an address with leading zeros is NXDOMAIN", qname: "01-2-3-4.ns.pod.cluster.local.", qtype: dns.TypeA, rcode: dns.RcodeNameError, ns: []string{soa}},
		{name: "too few parts is NXDOMAIN", qname: "1-2-3.ns.pod.cluster.local.", qtype: dns.TypeA, rcode: dns.RcodeNameError, ns: []string{soa}},
		{name: "a pod name is NXDOMAIN", qname: "web-0.ns.pod.cluster.local.", qtype: dns.TypeA, rcode: dns.RcodeNameError, ns: []string{soa}},
		{name: "a wildcard is NXDOMAIN", qname: "*.ns.pod.cluster.local.", qtype: dns.TypeA, rcode: dns.RcodeNameError, ns: []string{soa}},
		{name: "an IPv6 zone index is NXDOMAIN", qname: "fe80--1%eth0.ns.pod.cluster.local.", qtype: dns.TypeAAAA, rcode: dns.RcodeNameError, ns: []string{soa}},
		{name: "an IPv4-mapped IPv6 spelling is NXDOMAIN", qname: "--ffff-a01-203.ns.pod.cluster.local.", qtype: dns.TypeAAAA, rcode: dns.RcodeNameError, ns: []string{soa}},
		{name: "a name below a pod is NXDOMAIN", qname: "x.1-2-3-4.ns.pod.cluster.local.", qtype: dns.TypeA, rcode: dns.RcodeNameError, ns: []string{soa}},
		{name: "an alias to a pod name is followed to the synthesized address", qname: "topod.default.svc.cluster.local.", qtype: dns.TypeA,
			answer: []string{
				"topod.default.svc.cluster.local. 30 IN CNAME 10-244-1-5.default.pod.cluster.local.",
				"10-244-1-5.default.pod.cluster.local. 30 IN A 10.244.1.5",
			}},
		{name: "pod names of a zone other than the first are ordinary names", qname: "1-2-3-4.ns.pod.example.local.", qtype: dns.TypeA,
			answer: []string{"1-2-3-4.ns.pod.example.local. 30 IN A 10.9.9.9"}},
	})
}

func TestPodRecordsVerified(t *testing.T) {
	r, snap := podResolver(t, resolver.PodsVerified)
	runCases(t, r, snap, []testCase{
		{name: "a pod with a record answers its address", qname: "10-244-1-5.default.pod.cluster.local.", qtype: dns.TypeA,
			answer: []string{"10-244-1-5.default.pod.cluster.local. 30 IN A 10.244.1.5"}},
		{name: "an IPv6 pod answers its AAAA", qname: "fd00--5.default.pod.cluster.local.", qtype: dns.TypeAAAA,
			answer: []string{"fd00--5.default.pod.cluster.local. 30 IN AAAA fd00::5"}},
		{name: "AAAA of an IPv4 pod is NODATA", qname: "10-244-1-5.default.pod.cluster.local.", qtype: dns.TypeAAAA, ns: []string{soa}},
		{name: "the same address in another namespace is NXDOMAIN", qname: "10-244-1-5.other.pod.cluster.local.", qtype: dns.TypeA, rcode: dns.RcodeNameError, ns: []string{soa}},
		{name: "an address no pod has is NXDOMAIN", qname: "1-2-3-4.default.pod.cluster.local.", qtype: dns.TypeA, rcode: dns.RcodeNameError, ns: []string{soa}},
		{name: "a record without an address is no pod", qname: "text.default.pod.cluster.local.", qtype: dns.TypeTXT, rcode: dns.RcodeNameError, ns: []string{soa}},
		{name: "the namespace does not list its pods: NODATA", qname: "default.pod.cluster.local.", qtype: dns.TypeA, ns: []string{soa}},
		{name: "a namespace without pods is NXDOMAIN", qname: "empty.pod.cluster.local.", qtype: dns.TypeA, rcode: dns.RcodeNameError, ns: []string{soa}},
		{name: "a wildcard lists nothing", qname: "*.default.pod.cluster.local.", qtype: dns.TypeA, rcode: dns.RcodeNameError, ns: []string{soa}},
		{name: "the namespace any is a namespace, not a wildcard", qname: "10-244-9-9.any.pod.cluster.local.", qtype: dns.TypeA,
			answer: []string{"10-244-9-9.any.pod.cluster.local. 30 IN A 10.244.9.9"}},
		{name: "the namespace any does not match pods of other namespaces", qname: "10-244-1-5.any.pod.cluster.local.", qtype: dns.TypeA, rcode: dns.RcodeNameError, ns: []string{soa}},
		{name: "SRV of a pod is NODATA", qname: "10-244-1-5.default.pod.cluster.local.", qtype: dns.TypeSRV, ns: []string{soa}},
		{name: "an alias to a pod name is followed to its record", qname: "topod.default.svc.cluster.local.", qtype: dns.TypeA,
			answer: []string{
				"topod.default.svc.cluster.local. 30 IN CNAME 10-244-1-5.default.pod.cluster.local.",
				"10-244-1-5.default.pod.cluster.local. 30 IN A 10.244.1.5",
			}},
	})
}

func TestParsePodMode(t *testing.T) {
	for in, want := range map[string]resolver.PodMode{"": resolver.PodsDisabled, "disabled": resolver.PodsDisabled,
		"insecure": resolver.PodsInsecure, "verified": resolver.PodsVerified} {
		if got, err := resolver.ParsePodMode(in); err != nil || got != want {
			t.Errorf("ParsePodMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	t.Run("an unknown mode is an error naming it", func(t *testing.T) {
		if _, err := resolver.ParsePodMode("Verified"); err == nil || !strings.Contains(err.Error(), `"Verified"`) {
			t.Errorf("error = %v", err)
		}
		if _, err := resolver.New(resolver.Config{Zones: []string{"cluster.local."}, Pods: "yes"}); err == nil {
			t.Error("New accepted pod mode \"yes\"")
		}
	})
}

// FuzzResolvePods checks pod names in every mode: no panic, a response that
// packs, and never an address in disabled mode.
func FuzzResolvePods(f *testing.F) {
	for _, name := range []string{"1-2-3-4.ns.pod.cluster.local.", "fd00--1.ns.pod.cluster.local.",
		"10-244-1-5.default.pod.cluster.local.", "*.any.pod.cluster.local.", "pod.cluster.local."} {
		f.Add(name, dns.TypeA, uint8(0))
		f.Add(name, dns.TypeAAAA, uint8(1))
	}
	modes := []resolver.PodMode{resolver.PodsDisabled, resolver.PodsInsecure, resolver.PodsVerified}
	resolvers := make([]*resolver.Resolver, len(modes))
	var snap *snapshot.Snapshot
	for i, m := range modes {
		resolvers[i], snap = podResolver(f, m)
	}
	f.Fuzz(func(t *testing.T, label string, qtype uint16, mode uint8) {
		name := dns.Fqdn(label)
		req := new(dns.Msg).SetQuestion(name, qtype)
		if _, err := req.Pack(); err != nil {
			return
		}
		i := int(mode) % len(modes)
		resp := resolvers[i].Resolve(snap, req)
		if _, err := resp.Pack(); err != nil {
			t.Fatalf("response does not pack: %v\n%v", err, resp)
		}
		if modes[i] == resolver.PodsDisabled && strings.HasSuffix(strings.ToLower(name), ".pod.cluster.local.") && len(resp.Answer) > 0 {
			t.Fatalf("disabled mode answered %v", resp.Answer)
		}
	})
}
