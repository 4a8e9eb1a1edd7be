package skydns

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/dnstest"
	"github.com/kubesky/kubesky/kube2sky/hosts"
)

// peerConfigMap is the other keys of the ConfigMap a peer test's Corefile
// is in: CoreDNS reads them as files under /etc/coredns.
var peerConfigMap = map[string]string{"example.hosts": "# the file of a hosts plugin\n10.0.0.3 db.example.org\n"}

// The hosts plugin README's inline examples, and one of its files, read by CoreDNS and by
// kubesky's Corefile reader (kube2sky's records for the entries, skydns's
// flags), both forwarding the rest to one upstream. CoreDNS reads an empty
// hosts file where kubesky reads none. Listed names, their PTRs and names
// outside the hosts domain answer alike; the differences are kubesky's
// negative answers and PTRs, each named by the section it changes
// (docs/migrate.md): a type a listed name lacks is NODATA with the zone's
// SOA (CoreDNS: no SOA); an unlisted name of the domain is NXDOMAIN whether
// or not fallthrough is set (CoreDNS: the upstream's answer, or SERVFAIL);
// an address has one PTR, to its first name (CoreDNS: one per name).
func TestHostsAnswerAsCoreDNSDoes(t *testing.T) {
	coredns := coreDNSBinary(t)
	upstream := startUpstream(t, rewriteUpstream)
	dir := t.TempDir()
	emptyHosts := filepath.Join(dir, "hosts")
	if err := os.WriteFile(emptyHosts, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for key, text := range peerConfigMap {
		if err := os.WriteFile(filepath.Join(dir, key), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	type question struct {
		name    string
		qtype   uint16
		differs string // the section of a deliberate difference
	}
	cases := []struct {
		lines     string // the hosts directive, in a root server block
		questions []question
	}{
		{"hosts /etc/hosts example.org {\n        10.0.0.1 example.org\n        fallthrough\n    }", []question{
			{"example.org.", dns.TypeA, ""},
			{"EXAMPLE.org.", dns.TypeA, ""},
			{"1.0.0.10.in-addr.arpa.", dns.TypePTR, ""},
			{"example.net.", dns.TypeA, ""},
			{"example.org.", dns.TypeAAAA, "authority"},
			{"www.example.org.", dns.TypeA, "rcode"},
		}},
		{"hosts /etc/hosts example.com {\n        10.0.0.2 www.example.com web.example.com\n        fd00::2 www.example.com\n    }", []question{
			{"www.example.com.", dns.TypeA, ""},
			{"web.example.com.", dns.TypeA, ""},
			{"www.example.com.", dns.TypeAAAA, ""},
			{"2.0.0.10.in-addr.arpa.", dns.TypePTR, "answer"},
			{"example.net.", dns.TypeA, ""},
			{"ftp.example.com.", dns.TypeA, "rcode"},
		}},
		{"hosts /etc/coredns/example.hosts example.org {\n        fallthrough\n    }", []question{
			{"db.example.org.", dns.TypeA, ""},
			{"3.0.0.10.in-addr.arpa.", dns.TypePTR, ""},
			{"example.net.", dns.TypeA, ""},
			{"www.example.org.", dns.TypeA, "rcode"},
		}},
	}
	for _, c := range cases {
		t.Run(c.lines, func(t *testing.T) {
			reference := runCoreDNS(t, coredns, func(port int) string {
				return fmt.Sprintf(".:%d {\n    bind 127.0.0.1\n    %s\n    forward . %s\n}\n", port, strings.NewReplacer("/etc/hosts", emptyHosts, "/etc/coredns/", dir+"/").Replace(c.lines), upstream)
			}, "ready.example.")
			etcd := etcdtest.Start(t)
			cfg := testConfig(etcd.ClientURL())
			cfg.Forwarder, cfg.Forward.Upstreams = nil, []string{upstream}
			cfg.Zones = append(cfg.Zones, translatedFlag(t, c.lines, "zone")...)
			written := putHostRecords(t, etcd, c.lines)
			d := startDaemon(t, cfg)
			waitForSnapshot(t, d, written)
			for _, q := range c.questions {
				ours := dnstest.Ask(t, "udp", d.DNSAddr(), q.name, q.qtype)
				theirs := dnstest.Ask(t, "udp", reference, q.name, q.qtype)
				if q.differs == "" && ours.Authoritative != theirs.Authoritative {
					t.Errorf("%s: AA %v, CoreDNS's %v", q.name, ours.Authoritative, theirs.Authoritative)
				}
				t.Logf("%s %s", q.name, dns.TypeToString[q.qtype])
				compareAnswers(t, q.differs, render(ours), render(theirs))
			}
		})
	}
}

// putHostRecords writes the records kube2sky writes for a root server
// block holding lines, read from the Corefile as kube2sky reads it, and
// returns how many.
func putHostRecords(t *testing.T, etcd *etcdtest.Server, lines string) int {
	t.Helper()
	domain := translatedFlag(t, lines, "zone")[0]
	text, problem := hosts.FromCorefile(".:53 {\n    "+lines+"\n}\n", domain, peerConfigMap)
	if problem != nil {
		t.Fatal(problem)
	}
	entries, problems := hosts.Records(hosts.Config{Prefix: "/skydns", Domain: "hosts.cluster.local.", ExtraDomain: domain, TTL: 30},
		map[string]string{hosts.CorefileKey: text})
	if len(problems) > 0 || len(entries) == 0 {
		t.Fatalf("kube2sky's records: %v, problems %v", entries, problems)
	}
	for _, e := range entries {
		value, err := json.Marshal(e.Record)
		if err != nil {
			t.Fatal(err)
		}
		etcd.Put(t, e.Key, string(value))
	}
	return len(entries)
}
