package clusterset

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/contract"
	cs "github.com/kubesky/kubesky/contract/clusterset"
)

var t0 = time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)

func addrs(s ...string) []netip.Addr {
	var out []netip.Addr
	for _, a := range s {
		out = append(out, netip.MustParseAddr(a))
	}
	return out
}

// testView: "web" exported as ClusterSetIP by east (older) and west;
// "db" headless in east and west; "empty" headless without ready endpoints.
func testView() *cs.View {
	http := cs.Port{Name: "http", Protocol: "TCP", Port: 80}
	id := func(cluster, name string) cs.ExportID {
		return cs.ExportID{Cluster: cluster, ServiceName: cs.ServiceName{Namespace: "shop", Name: name}}
	}
	exports := map[cs.ExportID]cs.Export{
		id("east", "web"): {Created: t0, Type: cs.ClusterSetIP, Ports: []cs.Port{http, {Protocol: "UDP", Port: 53}}},
		id("west", "web"): {Created: t0.Add(time.Hour), Type: cs.Headless, Ports: []cs.Port{http, {Name: "metrics", Protocol: "TCP", Port: 9090}},
			Endpoints: []cs.Endpoint{{Hostname: "w1", Addresses: addrs("10.2.0.1")}}},
		id("east", "db"): {Created: t0, Type: cs.Headless, Ports: []cs.Port{{Name: "sql", Protocol: "TCP", Port: 5432}},
			Endpoints: []cs.Endpoint{{Hostname: "db-0", Addresses: addrs("10.1.0.5", "fd00::5")}}},
		id("west", "db"): {Created: t0.Add(time.Minute), Type: cs.Headless, Ports: []cs.Port{{Name: "sql", Protocol: "TCP", Port: 5432}},
			Endpoints: []cs.Endpoint{{Hostname: "10-2-0-9", Addresses: addrs("10.2.0.9")}}},
		id("west", "empty"): {Created: t0, Type: cs.Headless},
	}
	imports := map[cs.ServiceName]cs.Import{{Namespace: "shop", Name: "web"}: {IPs: addrs("242.0.0.7", "fd00:242::7")}}
	return cs.Merge(exports, imports, 42)
}

func TestAnswersFollowTheMCSDNSSpecification(t *testing.T) {
	view := testView()
	cases := []struct {
		name   string
		qtype  uint16
		rcode  int
		answer []string
	}{
		{"dns-version.clusterset.local.", dns.TypeTXT, dns.RcodeSuccess, []string{`dns-version.clusterset.local. 28800 IN TXT "1.0.0"`}},
		{"dns-version.clusterset.local.", dns.TypeA, dns.RcodeSuccess, nil},
		{"web.shop.svc.clusterset.local.", dns.TypeA, dns.RcodeSuccess, []string{"web.shop.svc.clusterset.local. 5 IN A 242.0.0.7"}},
		{"WEB.shop.svc.clusterset.local.", dns.TypeAAAA, dns.RcodeSuccess, []string{"WEB.shop.svc.clusterset.local. 5 IN AAAA fd00:242::7"}},
		{"_http._tcp.web.shop.svc.clusterset.local.", dns.TypeSRV, dns.RcodeSuccess, []string{"_http._tcp.web.shop.svc.clusterset.local. 5 IN SRV 0 1 80 web.shop.svc.clusterset.local."}},
		{"_metrics._tcp.web.shop.svc.clusterset.local.", dns.TypeSRV, dns.RcodeSuccess, []string{"_metrics._tcp.web.shop.svc.clusterset.local. 5 IN SRV 0 1 9090 web.shop.svc.clusterset.local."}},
		{"web.shop.svc.clusterset.local.", dns.TypeSRV, dns.RcodeSuccess, []string{
			"web.shop.svc.clusterset.local. 5 IN SRV 0 1 80 web.shop.svc.clusterset.local.",
			"web.shop.svc.clusterset.local. 5 IN SRV 0 1 9090 web.shop.svc.clusterset.local."}},
		{"_http._udp.web.shop.svc.clusterset.local.", dns.TypeSRV, dns.RcodeNameError, nil},
		{"_tcp.web.shop.svc.clusterset.local.", dns.TypeA, dns.RcodeSuccess, nil},
		{"w1.west.web.shop.svc.clusterset.local.", dns.TypeA, dns.RcodeNameError, nil},
		{"db.shop.svc.clusterset.local.", dns.TypeA, dns.RcodeSuccess, []string{
			"db.shop.svc.clusterset.local. 5 IN A 10.1.0.5", "db.shop.svc.clusterset.local. 5 IN A 10.2.0.9"}},
		{"db.shop.svc.clusterset.local.", dns.TypeAAAA, dns.RcodeSuccess, []string{"db.shop.svc.clusterset.local. 5 IN AAAA fd00::5"}},
		{"db-0.east.db.shop.svc.clusterset.local.", dns.TypeA, dns.RcodeSuccess, []string{"db-0.east.db.shop.svc.clusterset.local. 5 IN A 10.1.0.5"}},
		{"db-0.west.db.shop.svc.clusterset.local.", dns.TypeA, dns.RcodeNameError, nil},
		{"10-2-0-9.west.db.shop.svc.clusterset.local.", dns.TypeA, dns.RcodeSuccess, []string{"10-2-0-9.west.db.shop.svc.clusterset.local. 5 IN A 10.2.0.9"}},
		{"_sql._tcp.db.shop.svc.clusterset.local.", dns.TypeSRV, dns.RcodeSuccess, []string{
			"_sql._tcp.db.shop.svc.clusterset.local. 5 IN SRV 0 1 5432 db-0.east.db.shop.svc.clusterset.local.",
			"_sql._tcp.db.shop.svc.clusterset.local. 5 IN SRV 0 1 5432 10-2-0-9.west.db.shop.svc.clusterset.local."}},
		{"east.db.shop.svc.clusterset.local.", dns.TypeA, dns.RcodeNameError, nil},
		{"east.web.shop.svc.clusterset.local.", dns.TypeA, dns.RcodeNameError, nil},
		{"empty.shop.svc.clusterset.local.", dns.TypeA, dns.RcodeNameError, nil},
		{"gone.shop.svc.clusterset.local.", dns.TypeA, dns.RcodeNameError, nil},
		{"shop.svc.clusterset.local.", dns.TypeA, dns.RcodeSuccess, nil},
		{"other.svc.clusterset.local.", dns.TypeA, dns.RcodeNameError, nil},
		{"web.shop.pod.clusterset.local.", dns.TypeA, dns.RcodeNameError, nil},
		{"clusterset.local.", dns.TypeSOA, dns.RcodeSuccess, []string{"clusterset.local. 5 IN SOA ns.dns.clusterset.local. hostmaster.clusterset.local. 42 7200 1800 86400 5"}},
	}
	for _, c := range cases {
		t.Run(dns.TypeToString[c.qtype]+" "+c.name, func(t *testing.T) {
			m := Answer(view, new(dns.Msg).SetQuestion(c.name, c.qtype), 5)
			if m.Rcode != c.rcode {
				t.Errorf("rcode %s, want %s", dns.RcodeToString[m.Rcode], dns.RcodeToString[c.rcode])
			}
			if got := rrStrings(m.Answer); !slices.Equal(got, sorted(c.answer)) {
				t.Errorf("answer\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(sorted(c.answer), "\n"))
			}
			if len(m.Answer) == 0 && (len(m.Ns) != 1 || m.Ns[0].Header().Rrtype != dns.TypeSOA) {
				t.Errorf("an empty answer without the SOA: %v", m.Ns)
			}
		})
	}
}

func rrStrings(rrs []dns.RR) []string {
	var out []string
	for _, rr := range rrs {
		out = append(out, strings.ReplaceAll(rr.String(), "\t", " "))
	}
	return sorted(out)
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

func TestTheOldestExportDecidesTheTypeAndPortsUnion(t *testing.T) {
	view := testView()
	web := view.Service(cs.ServiceName{Namespace: "shop", Name: "web"})
	if web.Type != cs.ClusterSetIP || web.Members[0].Cluster != "east" {
		t.Errorf("type %s from %s, want ClusterSetIP from east (the oldest)", web.Type, web.Members[0].Cluster)
	}
	if len(web.Ports) != 3 {
		t.Errorf("ports %v, want http/80, 53/UDP and metrics/9090", web.Ports)
	}
	if got := view.Conflicts(cs.ServiceName{Namespace: "shop", Name: "web"}); !slices.Equal(got, []string{"west"}) {
		t.Errorf("conflicts %v, want [west]", got)
	}
}

func TestAPortNameTakenByAnOlderExportIsLeftOut(t *testing.T) {
	id := func(c string) cs.ExportID {
		return cs.ExportID{Cluster: c, ServiceName: cs.ServiceName{Namespace: "n", Name: "s"}}
	}
	v := cs.Merge(map[cs.ExportID]cs.Export{
		id("b"): {Created: t0, Type: cs.ClusterSetIP, Ports: []cs.Port{{Name: "http", Protocol: "TCP", Port: 80}}},
		id("a"): {Created: t0, Type: cs.ClusterSetIP, Ports: []cs.Port{{Name: "http", Protocol: "TCP", Port: 8080}}},
	}, nil, 1)
	got := v.Service(cs.ServiceName{Namespace: "n", Name: "s"}).Ports
	if len(got) != 1 || got[0].Port != 8080 {
		t.Errorf("ports %v, want only cluster a's http/8080 (same time, a sorts first)", got)
	}
}

func TestTheStoreSkipsAMalformedExportAndSaysWhy(t *testing.T) {
	var errs []error
	s := cs.NewStore(cs.DefaultPrefix, "east", func(err error) { errs = append(errs, err) })
	good := cs.Export{Created: t0, Type: cs.Headless, Endpoints: []cs.Endpoint{{Hostname: "a", Addresses: addrs("10.0.0.1")}}}
	s.Apply(contract.Update{Revision: 3, Full: true, Events: []contract.Event{
		{Type: contract.Put, Key: "/clusterset/exports/east/n/good", Value: good.Encode()},
		{Type: contract.Put, Key: "/clusterset/exports/east/n/bad", Value: []byte(`{"type":"Headless"`)},
		{Type: contract.Put, Key: "/clusterset/clusters/east", Value: []byte(`{"cluster":"east"}`)},
	}})
	v := s.View()
	if v.Service(cs.ServiceName{Namespace: "n", Name: "good"}) == nil || v.Service(cs.ServiceName{Namespace: "n", Name: "bad"}) != nil {
		t.Errorf("want the good export kept and the bad one skipped")
	}
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "/clusterset/exports/east/n/bad") {
		t.Errorf("malformed reports %v, want one naming the bad key", errs)
	}
	s.Apply(contract.Update{Revision: 4, Events: []contract.Event{{Type: contract.Delete, Key: "/clusterset/exports/east/n/good"}}})
	if m := Answer(s.View(), new(dns.Msg).SetQuestion("good.n.svc.clusterset.local.", dns.TypeA), 5); m.Rcode != dns.RcodeNameError {
		t.Errorf("after the delete: %s, want NXDOMAIN", dns.RcodeToString[m.Rcode])
	}
}

func TestTheStoreServesOnlyItsOwnClustersImports(t *testing.T) {
	s := cs.NewStore(cs.DefaultPrefix, "east", nil)
	api := cs.Export{Created: t0, Type: cs.ClusterSetIP}
	s.Apply(contract.Update{Revision: 5, Full: true, Events: []contract.Event{
		{Type: contract.Put, Key: "/clusterset/exports/west/n/api", Value: api.Encode()},
		{Type: contract.Put, Key: "/clusterset/imports/west/n/api", Value: cs.Import{IPs: addrs("10.97.0.9")}.Encode()},
		{Type: contract.Put, Key: "/clusterset/imports/east/n/api", Value: cs.Import{IPs: addrs("10.96.0.9")}.Encode()},
	}})
	m := Answer(s.View(), new(dns.Msg).SetQuestion("api.n.svc.clusterset.local.", dns.TypeA), 5)
	if len(m.Answer) != 1 || m.Answer[0].(*dns.A).A.String() != "10.96.0.9" {
		t.Errorf("answer %v, want east's own clusterset IP only", m.Answer)
	}
	s.Apply(contract.Update{Revision: 6, Events: []contract.Event{{Type: contract.Delete, Key: "/clusterset/imports/east/n/api"}}})
	if m := Answer(s.View(), new(dns.Msg).SetQuestion("api.n.svc.clusterset.local.", dns.TypeA), 5); m.Rcode != dns.RcodeSuccess || len(m.Answer) != 0 {
		t.Errorf("without east's import: %s %v, want NODATA (west's IP does not route in east)", dns.RcodeToString[m.Rcode], m.Answer)
	}
}

func TestAQuestionlessQueryIsFormErr(t *testing.T) {
	if m := Answer(testView(), new(dns.Msg), 5); m.Rcode != dns.RcodeFormatError {
		t.Errorf("rcode %s", dns.RcodeToString[m.Rcode])
	}
}
