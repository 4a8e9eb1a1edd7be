package records

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kubesky/kubesky/contract"
)

const testOwner = "kube2sky.cluster.local"

var testZone = NewZone("cluster.local", "/skydns", 30, testOwner)

// buildCase is one row of the records table. want lists the entries as
// "<key> <host>[ port=N]", where a key starting with "arpa/" is under
// "/skydns/" and any other under "/skydns/local/cluster/"; "{v}" stands for
// HashLabel(v, 0), "{v:N}" for HashLabel(v, N) and "{ptr:IP}" for the PTR key
// of IP.
type buildCase struct {
	name     string
	svc      Service
	slices   []EndpointSlice
	want     []string
	problems []string // substrings, one per Problem, in order
}

var buildCases = []buildCase{
	{
		name: "a ClusterIP Service gets an A record, a PTR and an SRV per named port",
		svc:  clusterIPService("web", []string{"10.96.0.10"}, Port{Name: "http", Protocol: "TCP", Port: 80}, Port{Protocol: "TCP", Port: 8443}),
		want: []string{
			"arpa/in-addr/10/96/0/10 web.default.svc.cluster.local.",
			"svc/default/web/_tcp/_http/{web.default.svc.cluster.local.:80} web.default.svc.cluster.local. port=80",
			"svc/default/web/{10.96.0.10} 10.96.0.10",
		},
	},
	{
		name: "a NodePort Service is answered like a ClusterIP Service",
		svc:  withType(clusterIPService("np", []string{"10.96.0.11"}), TypeNodePort),
		want: []string{"arpa/in-addr/10/96/0/11 np.default.svc.cluster.local.", "svc/default/np/{10.96.0.11} 10.96.0.11"},
	},
	{
		name: "a LoadBalancer Service is answered like a ClusterIP Service",
		svc:  withType(clusterIPService("lb", []string{"10.96.0.12"}), TypeLoadBalancer),
		want: []string{"arpa/in-addr/10/96/0/12 lb.default.svc.cluster.local.", "svc/default/lb/{10.96.0.12} 10.96.0.12"},
	},
	{
		name: "a dual-stack Service gets an A and an AAAA record and both PTRs",
		svc:  clusterIPService("web", []string{"10.96.0.10", "fd00:10:96::a"}, Port{Name: "dns", Protocol: "UDP", Port: 53}),
		want: []string{
			"arpa/in-addr/10/96/0/10 web.default.svc.cluster.local.",
			"{ptr:fd00:10:96::a} web.default.svc.cluster.local.",
			"svc/default/web/_udp/_dns/{web.default.svc.cluster.local.:53} web.default.svc.cluster.local. port=53",
			"svc/default/web/{10.96.0.10} 10.96.0.10",
			"svc/default/web/{fd00:10:96::a} fd00:10:96::a",
		},
	},
	{
		name: "TCP, UDP and SCTP ports each get their own SRV name",
		svc: clusterIPService("multi", []string{"10.96.0.20"},
			Port{Name: "a", Protocol: "TCP", Port: 1}, Port{Name: "b", Protocol: "UDP", Port: 2}, Port{Name: "c", Protocol: "SCTP", Port: 3}, Port{Name: "d", Port: 4}),
		want: []string{
			"arpa/in-addr/10/96/0/20 multi.default.svc.cluster.local.",
			"svc/default/multi/_sctp/_c/{multi.default.svc.cluster.local.:3} multi.default.svc.cluster.local. port=3",
			"svc/default/multi/_tcp/_a/{multi.default.svc.cluster.local.:1} multi.default.svc.cluster.local. port=1",
			"svc/default/multi/_tcp/_d/{multi.default.svc.cluster.local.:4} multi.default.svc.cluster.local. port=4",
			"svc/default/multi/_udp/_b/{multi.default.svc.cluster.local.:2} multi.default.svc.cluster.local. port=2",
			"svc/default/multi/{10.96.0.20} 10.96.0.20",
		},
	},
	{
		name: "a port name from kubectl create service (80-8080) is a valid SRV label",
		svc:  clusterIPService("web", []string{"10.96.0.10"}, Port{Name: "80-8080", Protocol: "TCP", Port: 80}),
		want: []string{
			"arpa/in-addr/10/96/0/10 web.default.svc.cluster.local.",
			"svc/default/web/_tcp/_80-8080/{web.default.svc.cluster.local.:80} web.default.svc.cluster.local. port=80",
			"svc/default/web/{10.96.0.10} 10.96.0.10",
		},
	},
	{
		name: "a Service whose cluster IP is not allocated yet has no records",
		svc:  clusterIPService("pending", nil, Port{Name: "http", Protocol: "TCP", Port: 80}),
	},
	{
		name: "a headless Service gets a record per ready endpoint, by hostname or dashed IP",
		svc:  headlessService("db", Port{Name: "pg", Protocol: "TCP", Port: 5432}),
		slices: []EndpointSlice{slice("db", "db-a", "IPv4", []Port{{Name: "pg", Protocol: "TCP", Port: 15432}, {Protocol: "TCP", Port: 9000}},
			Endpoint{Addresses: []string{"10.244.1.7"}, Hostname: "db-0", Ready: true},
			Endpoint{Addresses: []string{"10.244.2.9"}, Ready: true},
			Endpoint{Addresses: []string{"10.244.3.3"}, Hostname: "db-2", Ready: false},
		)},
		want: []string{
			"arpa/in-addr/10/244/1/7 db-0.db.default.svc.cluster.local.",
			"arpa/in-addr/10/244/2/9 10-244-2-9.db.default.svc.cluster.local.",
			"svc/default/db/10-244-2-9 10.244.2.9",
			"svc/default/db/_tcp/_pg/10-244-2-9 10-244-2-9.db.default.svc.cluster.local. port=15432",
			"svc/default/db/_tcp/_pg/db-0 db-0.db.default.svc.cluster.local. port=15432",
			"svc/default/db/db-0 10.244.1.7",
		},
	},
	{
		name: "publishNotReadyAddresses publishes endpoints that are not ready",
		svc:  publishNotReady(headlessService("db")),
		slices: []EndpointSlice{slice("db", "db-a", "IPv4", nil,
			Endpoint{Addresses: []string{"10.244.3.3"}, Hostname: "db-2", Ready: false})},
		want: []string{
			"arpa/in-addr/10/244/3/3 db-2.db.default.svc.cluster.local.",
			"svc/default/db/db-2 10.244.3.3",
		},
	},
	{
		name:   "a headless Service without ready endpoints has no records",
		svc:    headlessService("db"),
		slices: []EndpointSlice{slice("db", "db-a", "IPv4", nil, Endpoint{Addresses: []string{"10.244.3.3"}, Ready: false})},
	},
	{
		name: "a headless Service without slices has no records",
		svc:  headlessService("db"),
	},
	{
		name: "an address listed in two slices is written once",
		svc:  headlessService("db"),
		slices: []EndpointSlice{
			slice("db", "db-a", "IPv4", nil, Endpoint{Addresses: []string{"10.244.1.7"}, Ready: true}),
			slice("db", "db-b", "IPv4", nil, Endpoint{Addresses: []string{"10.244.1.7"}, Ready: true}, Endpoint{Addresses: []string{"10.244.1.7"}, Ready: false}),
		},
		want: []string{
			"arpa/in-addr/10/244/1/7 10-244-1-7.db.default.svc.cluster.local.",
			"svc/default/db/10-244-1-7 10.244.1.7",
		},
	},
	{
		name: "a dual-stack endpoint with a hostname keeps both addresses one level below the hostname",
		svc:  headlessService("db"),
		slices: []EndpointSlice{
			slice("db", "db-v4", "IPv4", []Port{{Name: "pg", Protocol: "TCP", Port: 5432}}, Endpoint{Addresses: []string{"10.244.1.7"}, Hostname: "db-0", Ready: true}),
			slice("db", "db-v6", "IPv6", []Port{{Name: "pg", Protocol: "TCP", Port: 5432}}, Endpoint{Addresses: []string{"fd00::7"}, Hostname: "db-0", Ready: true}),
		},
		want: []string{
			"arpa/in-addr/10/244/1/7 db-0.db.default.svc.cluster.local.",
			"{ptr:fd00::7} db-0.db.default.svc.cluster.local.",
			"svc/default/db/_tcp/_pg/db-0 db-0.db.default.svc.cluster.local. port=5432",
			"svc/default/db/db-0/{10.244.1.7} 10.244.1.7",
			"svc/default/db/db-0/{fd00::7} fd00::7",
		},
	},
	{
		name:   "an IPv6 endpoint without a hostname is named by its dashed address",
		svc:    headlessService("db"),
		slices: []EndpointSlice{slice("db", "db-v6", "IPv6", nil, Endpoint{Addresses: []string{"FD00:0::7"}, Ready: true})},
		want: []string{
			"{ptr:fd00::7} fd00--7.db.default.svc.cluster.local.",
			"svc/default/db/fd00--7 fd00::7",
		},
	},
	{
		name: "one hostname on two ports of the same name keeps both SRV targets",
		svc:  headlessService("db"),
		slices: []EndpointSlice{
			slice("db", "db-a", "IPv4", []Port{{Name: "pg", Port: 5432}}, Endpoint{Addresses: []string{"10.244.1.7"}, Hostname: "db-0", Ready: true}),
			slice("db", "db-b", "IPv4", []Port{{Name: "pg", Port: 5433}}, Endpoint{Addresses: []string{"10.244.1.7"}, Hostname: "db-0", Ready: true}),
		},
		want: []string{
			"arpa/in-addr/10/244/1/7 db-0.db.default.svc.cluster.local.",
			"svc/default/db/_tcp/_pg/db-0/{db-0.db.default.svc.cluster.local.:5432} db-0.db.default.svc.cluster.local. port=5432",
			"svc/default/db/_tcp/_pg/db-0/{db-0.db.default.svc.cluster.local.:5433} db-0.db.default.svc.cluster.local. port=5433",
			"svc/default/db/db-0 10.244.1.7",
		},
	},
	{
		name: "one IP under two hostnames gets both names and the PTR of the smaller target",
		svc:  headlessService("db"),
		slices: []EndpointSlice{slice("db", "db-a", "IPv4", nil,
			Endpoint{Addresses: []string{"10.244.1.7"}, Hostname: "zeta", Ready: true},
			Endpoint{Addresses: []string{"10.244.1.7"}, Hostname: "alpha", Ready: true})},
		want: []string{
			"arpa/in-addr/10/244/1/7 alpha.db.default.svc.cluster.local.",
			"svc/default/db/alpha 10.244.1.7",
			"svc/default/db/zeta 10.244.1.7",
		},
	},
	{
		name: "slices of other Services, other namespaces and FQDN slices are ignored",
		svc:  headlessService("db"),
		slices: []EndpointSlice{
			slice("other", "other-a", "IPv4", nil, Endpoint{Addresses: []string{"10.244.9.9"}, Ready: true}),
			inNamespace(slice("db", "db-x", "IPv4", nil, Endpoint{Addresses: []string{"10.244.8.8"}, Ready: true}), "kube-system"),
			slice("db", "db-f", "FQDN", nil, Endpoint{Addresses: []string{"example.com"}, Ready: true}),
		},
	},
	{
		name: "an ExternalName Service is a CNAME to the external name and has no SRV",
		svc:  Service{Namespace: "default", Name: "ext", Type: TypeExternalName, ExternalName: "DB.Example.com", Ports: []Port{{Name: "pg", Port: 5432}}},
		want: []string{"svc/default/ext/{db.example.com.} db.example.com."},
	},
	{
		name: "an ExternalName with a trailing dot is the same name",
		svc:  Service{Namespace: "default", Name: "ext", Type: TypeExternalName, ExternalName: "db.example.com."},
		want: []string{"svc/default/ext/{db.example.com.} db.example.com."},
	},
	{
		name:     "a Service whose name is not a DNS label has no records",
		svc:      clusterIPService("Web_1", []string{"10.96.0.10"}),
		problems: []string{`Service default/Web_1: metadata.name "Web_1": not a DNS label`},
	},
	{
		name:     "a Service whose namespace is not a DNS label has no records",
		svc:      inServiceNamespace(clusterIPService("web", []string{"10.96.0.10"}), "a.b"),
		problems: []string{`metadata.namespace "a.b": not a DNS label`},
	},
	{
		name:     "an unparseable cluster IP is skipped and the other family is still written",
		svc:      clusterIPService("web", []string{"10.96.0.300", "fd00::a"}),
		want:     []string{"{ptr:fd00::a} web.default.svc.cluster.local.", "svc/default/web/{fd00::a} fd00::a"},
		problems: []string{`spec.clusterIPs[0] "10.96.0.300": not an IP address`},
	},
	{
		name: "invalid ports are skipped and the valid ones still get SRV records",
		svc: clusterIPService("web", []string{"10.96.0.10"},
			Port{Name: "Bad_Name", Protocol: "TCP", Port: 1}, Port{Name: "quic", Protocol: "QUIC", Port: 2},
			Port{Name: "big", Protocol: "TCP", Port: 70000}, Port{Name: "ok", Protocol: "TCP", Port: 3}),
		want: []string{
			"arpa/in-addr/10/96/0/10 web.default.svc.cluster.local.",
			"svc/default/web/_tcp/_ok/{web.default.svc.cluster.local.:3} web.default.svc.cluster.local. port=3",
			"svc/default/web/{10.96.0.10} 10.96.0.10",
		},
		problems: []string{"spec.ports[0]", "port name is not a DNS label", "spec.ports[1]", "unknown protocol", "spec.ports[2]", "out of range"},
	},
	{
		name:     "an unknown Service type has no records",
		svc:      withType(clusterIPService("web", []string{"10.96.0.10"}), "Magic"),
		problems: []string{`spec.type "Magic": unknown Service type`},
	},
	{
		name:     "an ExternalName that is an IP address is not a CNAME target",
		svc:      Service{Namespace: "default", Name: "ext", Type: TypeExternalName, ExternalName: "192.0.2.1"},
		problems: []string{`spec.externalName "192.0.2.1": not a domain name`},
	},
	{
		name:     "an empty ExternalName has no records",
		svc:      Service{Namespace: "default", Name: "ext", Type: TypeExternalName},
		problems: []string{`spec.externalName "": not a domain name`},
	},
	{
		name: "bad endpoints are skipped and the valid ones still written",
		svc:  headlessService("db"),
		slices: []EndpointSlice{slice("db", "db-a", "IPv4", []Port{{Name: "x y", Port: 1}},
			Endpoint{Addresses: []string{"10.244.1.7"}, Hostname: "Not_A_Label", Ready: true},
			Endpoint{Addresses: []string{"not-an-ip"}, Ready: true},
			Endpoint{Addresses: []string{"fd00::1"}, Ready: true},
			Endpoint{Addresses: []string{"10.244.1.8"}, Ready: true},
		)},
		want: []string{
			"arpa/in-addr/10/244/1/8 10-244-1-8.db.default.svc.cluster.local.",
			"svc/default/db/10-244-1-8 10.244.1.8",
		},
		problems: []string{
			`EndpointSlice default/db-a: ports[0] "x y/`,
			`endpoints[0].hostname "Not_A_Label": not a DNS label`,
			`endpoints[1].addresses[0] "not-an-ip": not an IP address`,
			`endpoints[2].addresses[0] "fd00::1": address does not match addressType IPv4`,
		},
	},
}

func TestBuild(t *testing.T) {
	runBuildCases(t, testZone, buildCases)
}

// With empty Services ignored (CoreDNS's ignore empty_service), a cluster
// IP Service has records only while one of its endpoints is ready (or
// published anyway); headless and ExternalName Services are unchanged.
func TestBuildWithEmptyServicesIgnored(t *testing.T) {
	web := clusterIPService("web", []string{"10.96.0.10"})
	withRecords := []string{"arpa/in-addr/10/96/0/10 web.default.svc.cluster.local.", "svc/default/web/{10.96.0.10} 10.96.0.10"}
	runBuildCases(t, testZone.WithEmptyServicesIgnored(), []buildCase{
		{name: "no slices, no records", svc: web},
		{name: "no ready endpoint, no records", svc: web,
			slices: []EndpointSlice{slice("web", "web-a", "IPv4", nil, Endpoint{Addresses: []string{"10.244.1.1"}, Ready: false})}},
		{name: "another Service's ready endpoint does not count", svc: web,
			slices: []EndpointSlice{slice("api", "api-a", "IPv4", nil, Endpoint{Addresses: []string{"10.244.1.1"}, Ready: true})}},
		{name: "a ready endpoint, the cluster IP's records", svc: web, want: withRecords,
			slices: []EndpointSlice{slice("web", "web-a", "IPv4", nil,
				Endpoint{Addresses: []string{"10.244.1.1"}, Ready: false}, Endpoint{Addresses: []string{"10.244.1.2"}, Ready: true})}},
		{name: "publishNotReadyAddresses counts every endpoint", svc: publishNotReady(web), want: withRecords,
			slices: []EndpointSlice{slice("web", "web-a", "IPv4", nil, Endpoint{Addresses: []string{"10.244.1.1"}, Ready: false})}},
	})
}

// With namespaces (CoreDNS's namespaces), the other namespaces' Services
// have no records, and no problem is reported for them.
func TestBuildWithNamespaces(t *testing.T) {
	other := clusterIPService("web", []string{"10.96.0.11"})
	other.Namespace = "team-b"
	runBuildCases(t, testZone.WithNamespaces([]string{"default"}), []buildCase{
		{name: "a listed namespace", svc: clusterIPService("web", []string{"10.96.0.10"}),
			want: []string{"arpa/in-addr/10/96/0/10 web.default.svc.cluster.local.", "svc/default/web/{10.96.0.10} 10.96.0.10"}},
		{name: "another namespace", svc: other},
	})
}

// With endpoint pod names (CoreDNS's endpoint_pod_names), an endpoint
// without a hostname is named by its pod; a hostname still wins, and a pod
// name that is no DNS label (or none) leaves the dashed address.
func TestBuildWithEndpointPodNames(t *testing.T) {
	runBuildCases(t, testZone.WithEndpointPodNames(), []buildCase{{
		name: "endpoints named by hostname, pod name, or dashed address",
		svc:  headlessService("db"),
		slices: []EndpointSlice{slice("db", "db-a", "IPv4", nil,
			Endpoint{Addresses: []string{"10.244.1.7"}, Hostname: "db-0", PodName: "", Ready: true},
			Endpoint{Addresses: []string{"10.244.2.9"}, PodName: "db-7f9c", Ready: true},
			Endpoint{Addresses: []string{"10.244.3.3"}, PodName: "a.b", Ready: true},
			Endpoint{Addresses: []string{"10.244.4.4"}, Ready: true},
		)},
		want: []string{
			"arpa/in-addr/10/244/1/7 db-0.db.default.svc.cluster.local.",
			"arpa/in-addr/10/244/2/9 db-7f9c.db.default.svc.cluster.local.",
			"arpa/in-addr/10/244/3/3 10-244-3-3.db.default.svc.cluster.local.",
			"arpa/in-addr/10/244/4/4 10-244-4-4.db.default.svc.cluster.local.",
			"svc/default/db/db-0 10.244.1.7",
			"svc/default/db/db-7f9c 10.244.2.9",
			"svc/default/db/10-244-3-3 10.244.3.3",
			"svc/default/db/10-244-4-4 10.244.4.4",
		},
	}})
}

// runBuildCases runs each case through Build in zone z.
func runBuildCases(t *testing.T, z Zone, cases []buildCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			entries, problems := Build(z, c.svc, c.slices)
			if got, want := render(entries), expand(t, c.want); !slices.Equal(got, want) {
				t.Errorf("records:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
			}
			checkProblems(t, problems, c.problems)
			checkStamped(t, entries)
		})
	}
}

func checkProblems(t *testing.T, got []Problem, want []string) {
	t.Helper()
	text := make([]string, len(got))
	for i, p := range got {
		text[i] = p.Error()
	}
	all := strings.Join(text, "\n")
	for _, w := range want {
		i := strings.Index(all, w)
		if i < 0 {
			t.Errorf("problems %q do not contain %q (in order)", text, w)
			return
		}
		all = all[i+len(w):]
	}
	if len(want) == 0 && len(got) != 0 {
		t.Errorf("unexpected problems: %q", text)
	}
}

func checkStamped(t *testing.T, entries []Entry) {
	t.Helper()
	for _, e := range entries {
		if e.Record.TTL != 30 || e.Record.Owner != testOwner {
			t.Errorf("%s: ttl %d owner %q, want 30 and %q", e.Key, e.Record.TTL, e.Record.Owner, testOwner)
		}
	}
}

func render(entries []Entry) []string {
	var out []string
	for _, e := range entries {
		s := e.Key + " " + e.Record.Host
		if e.Record.Port != 0 {
			s += fmt.Sprintf(" port=%d", e.Record.Port)
		}
		out = append(out, s)
	}
	return out
}

var placeholder = regexp.MustCompile(`\{[^}]*\}`)

func expand(t *testing.T, lines []string) []string {
	t.Helper()
	var out []string
	for _, line := range lines {
		line = placeholder.ReplaceAllStringFunc(line, func(p string) string { return expandPlaceholder(t, p[1:len(p)-1]) })
		switch {
		case strings.HasPrefix(line, "/"):
		case strings.HasPrefix(line, "arpa/"):
			line = "/skydns/" + line
		default:
			line = "/skydns/local/cluster/" + line
		}
		out = append(out, line)
	}
	slices.Sort(out)
	return out
}

func expandPlaceholder(t *testing.T, p string) string {
	if ip, ok := strings.CutPrefix(p, "ptr:"); ok {
		return contract.ReverseKey("/skydns", netip.MustParseAddr(ip))
	}
	if i := strings.LastIndex(p, ":"); i > 0 && !strings.Contains(p[:i], ":") && strings.HasSuffix(p[:i], ".") {
		var port int
		if _, err := fmt.Sscan(p[i+1:], &port); err != nil {
			t.Fatalf("placeholder %q: %v", p, err)
		}
		return HashLabel(p[:i], port)
	}
	return HashLabel(p, 0)
}

func clusterIPService(name string, ips []string, ports ...Port) Service {
	return Service{Namespace: "default", Name: name, Type: TypeClusterIP, ClusterIPs: ips, Ports: ports}
}

func headlessService(name string, ports ...Port) Service {
	return Service{Namespace: "default", Name: name, Type: TypeClusterIP, ClusterIPs: []string{ClusterIPNone}, Ports: ports}
}

func withType(s Service, typ string) Service { s.Type = typ; return s }

func publishNotReady(s Service) Service { s.PublishNotReadyAddresses = true; return s }

func inServiceNamespace(s Service, ns string) Service { s.Namespace = ns; return s }

func slice(service, name, addressType string, ports []Port, endpoints ...Endpoint) EndpointSlice {
	return EndpointSlice{Namespace: "default", Name: name, Service: service, AddressType: addressType, Ports: ports, Endpoints: endpoints}
}

func inNamespace(s EndpointSlice, ns string) EndpointSlice { s.Namespace = ns; return s }
