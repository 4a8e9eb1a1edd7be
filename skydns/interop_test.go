package skydns

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/dnstest"
	"github.com/kubesky/kubesky/internal/freeport"
	"github.com/kubesky/kubesky/internal/polltest"
)

// interopRecords is the etcd content both servers read, laid out the way
// kube2sky writes it (see DESIGN.md) plus records written by hand.
var interopRecords = map[string]string{
	"/skydns/local/cluster/dns-version":                                  `{"text":"1.1.0"}`,
	"/skydns/local/cluster/svc/default/web/3a1f2c":                       `{"host":"10.96.0.10"}`,
	"/skydns/local/cluster/svc/default/web/5b2e9d":                       `{"host":"fd00:10:96::a"}`,
	"/skydns/local/cluster/svc/default/web/_tcp/_http/3a1f2c":            `{"host":"web.default.svc.cluster.local.","port":80}`,
	"/skydns/local/cluster/svc/default/v4only/1c2d3e":                    `{"host":"10.96.0.11"}`,
	"/skydns/local/cluster/svc/default/db/db-0":                          `{"host":"10.244.1.7"}`,
	"/skydns/local/cluster/svc/default/db/db-1":                          `{"host":"10.244.2.8"}`,
	"/skydns/local/cluster/svc/default/db/_tcp/_pg/db-0":                 `{"host":"db-0.db.default.svc.cluster.local.","port":5432}`,
	"/skydns/local/cluster/svc/default/db/_tcp/_pg/db-1":                 `{"host":"db-1.db.default.svc.cluster.local.","port":5432}`,
	"/skydns/local/cluster/svc/default/ext/9f8e7d":                       `{"host":"example.com."}`,
	"/skydns/local/cluster/svc/default/alias/4a4a4a":                     `{"host":"web.default.svc.cluster.local."}`,
	"/skydns/local/cluster/svc/default/handmade":                         `{"host":"web.default.svc.cluster.local."}`,
	"/skydns/local/cluster/svc/default/notes/1":                          `{"text":"hello world"}`,
	"/skydns/local/cluster/svc/default/iphost/_tcp/_api/10-244-3-9":      `{"host":"10.244.3.9","port":8080}`,
	"/skydns/local/cluster/svc/other/a/x1":                               `{"host":"10.97.0.1"}`,
	"/skydns/local/cluster/svc/other/b/x1":                               `{"host":"10.97.0.2"}`,
	contract.ReverseKey("/skydns", netip.MustParseAddr("fd00:10:96::a")): `{"host":"web.default.svc.cluster.local."}`,
	"/skydns/arpa/in-addr/10/96/0/10":                                    `{"host":"web.default.svc.cluster.local."}`,
}

// interopCases are the questions asked of both servers. Every section of
// the two answers must be the same (see render), except the one named by
// differs: a deliberate difference, listed in docs/resolver.md, that must
// still be there (so the list stays true).
var interopCases = []struct {
	name    string
	qname   string
	qtype   uint16
	empty   bool   // no answer records expected (NXDOMAIN, NODATA)
	differs string // "", "rcode" (then nothing else is compared), "answer" or "additional"
}{
	{"A of a ClusterIP service", "web.default.svc.cluster.local.", dns.TypeA, false, ""},
	{"AAAA of a dual-stack service", "web.default.svc.cluster.local.", dns.TypeAAAA, false, ""},
	{"A of a headless service", "db.default.svc.cluster.local.", dns.TypeA, false, ""},
	{"A of one headless endpoint", "db-0.db.default.svc.cluster.local.", dns.TypeA, false, ""},
	{"SRV of a named port with a dual-stack target", "_http._tcp.web.default.svc.cluster.local.", dns.TypeSRV, false, "additional"},
	{"SRV of a headless named port", "_pg._tcp.db.default.svc.cluster.local.", dns.TypeSRV, false, ""},
	{"SRV whose host is an IP", "_api._tcp.iphost.default.svc.cluster.local.", dns.TypeSRV, false, ""},
	{"TXT of the schema version", "dns-version.cluster.local.", dns.TypeTXT, false, ""},
	{"TXT of a text record", "notes.default.svc.cluster.local.", dns.TypeTXT, false, ""},
	{"CNAME stored at the name's own key", "handmade.default.svc.cluster.local.", dns.TypeCNAME, false, ""},
	{"CNAME stored below the name's key (ExternalName)", "ext.default.svc.cluster.local.", dns.TypeCNAME, false, "rcode"},
	{"A of an ExternalName service, not forwarded", "ext.default.svc.cluster.local.", dns.TypeA, false, ""},
	{"A of a CNAME inside the zone", "alias.default.svc.cluster.local.", dns.TypeA, false, ""},
	{"PTR of an IPv4 address", "10.0.96.10.in-addr.arpa.", dns.TypePTR, false, ""},
	{"PTR of an IPv6 address", contract.ReverseName(netip.MustParseAddr("fd00:10:96::a")), dns.TypePTR, false, ""},
	{"NXDOMAIN for a missing service", "missing.default.svc.cluster.local.", dns.TypeA, true, ""},
	{"NXDOMAIN for a missing PTR", "99.0.96.10.in-addr.arpa.", dns.TypePTR, true, ""},
	{"NODATA for AAAA of an IPv4-only service", "v4only.default.svc.cluster.local.", dns.TypeAAAA, true, ""},
	{"A of a wildcard over services with named ports", "*.default.svc.cluster.local.", dns.TypeA, false, "answer"},
	{"A of a wildcard over plain records", "*.other.svc.cluster.local.", dns.TypeA, false, ""},
	{"names are matched case-insensitively", "WEB.Default.svc.cluster.local.", dns.TypeA, false, ""},
}

// TestInterop proves the record contract: CoreDNS's etcd plugin and
// skydns, reading the same etcd, give the same rcode and answer RRsets.
func TestInterop(t *testing.T) {
	coredns := coreDNSBinary(t)
	etcd := etcdtest.Start(t)
	var last int64
	for key, value := range interopRecords {
		last = etcd.Put(t, key, value)
	}
	d := startDaemon(t, testConfig(etcd.ClientURL()))
	polltest.NoComplaint(t, "skydns synced", func() string {
		if rev := d.Mirror().Snapshot().Revision(); rev < last {
			return fmt.Sprintf("at revision %d of %d", rev, last)
		}
		return ""
	})
	reference := startCoreDNS(t, coredns, etcd.ClientURL())
	for _, c := range interopCases {
		t.Run(c.name, func(t *testing.T) {
			ours := dnstest.Ask(t, "tcp", d.DNSAddr(), c.qname, c.qtype)
			theirs := dnstest.Ask(t, "tcp", reference, c.qname, c.qtype)
			if (len(ours.Answer) == 0) != c.empty {
				t.Fatalf("skydns answered %d records, want empty=%v: the case proves nothing", len(ours.Answer), c.empty)
			}
			compareAnswers(t, c.differs, render(ours), render(theirs))
		})
	}
}

func compareAnswers(t *testing.T, differs string, ours, theirs map[string]string) {
	t.Helper()
	for _, sec := range []string{"rcode", "answer", "authority", "additional"} {
		same := ours[sec] == theirs[sec]
		switch {
		case sec == differs && same:
			t.Errorf("the %s no longer differs from CoreDNS's: update this case and docs/resolver.md\n%s", sec, ours[sec])
		case sec == differs:
			t.Logf("deliberate difference in the %s\nskydns:\n%s\nCoreDNS:\n%s", sec, ours[sec], theirs[sec])
		case !same:
			t.Errorf("%s differs\nskydns:\n%s\nCoreDNS:\n%s", sec, ours[sec], theirs[sec])
		}
		if differs == "rcode" {
			return
		}
	}
}

// render is a message's rcode and its sections as sorted zone-file lines,
// TTL-insensitive: TTLs and SOA serials (a revision in skydns, a clock in
// CoreDNS) are zeroed, owner names lower-cased, OPT records left out.
func render(m *dns.Msg) map[string]string {
	return map[string]string{
		"rcode":      dns.RcodeToString[m.Rcode],
		"answer":     section(m.Answer),
		"authority":  section(m.Ns),
		"additional": section(m.Extra),
	}
}

func section(rrs []dns.RR) string {
	var lines []string
	for _, rr := range rrs {
		if rr.Header().Rrtype == dns.TypeOPT {
			continue
		}
		rr = dns.Copy(rr)
		rr.Header().Ttl = 0
		rr.Header().Name = strings.ToLower(rr.Header().Name)
		if soa, ok := rr.(*dns.SOA); ok {
			soa.Serial = 0
		}
		lines = append(lines, rr.String())
	}
	return strings.Join(sorted(lines), "\n")
}

// coreDNSBinary returns bin/coredns at the module root; it fails the test
// when missing, so a CI without CoreDNS cannot pass by skipping.
func coreDNSBinary(t *testing.T) string {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("..", "bin", "coredns"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("CoreDNS is needed for the interop test: run `make coredns` to build %s (%v)", path, err)
	}
	return path
}

// startCoreDNS runs CoreDNS with the etcd plugin on a free 127.0.0.1 port
// and returns its address once it answers.
func startCoreDNS(t *testing.T, binary, etcdURL string) string {
	t.Helper()
	return runCoreDNS(t, binary, func(port int) string {
		return fmt.Sprintf(`.:%d {
    bind 127.0.0.1
    etcd cluster.local in-addr.arpa ip6.arpa {
        path /skydns
        endpoint %s
    }
}
`, port, etcdURL)
	}, "dns-version.cluster.local.")
}

// runCoreDNS runs CoreDNS with the Corefile corefile makes for a free
// 127.0.0.1 port, and returns its address once it answers a question for
// probe (whatever the rcode).
func runCoreDNS(t *testing.T, binary string, corefile func(port int) string, probe string) string {
	t.Helper()
	port := freeport.Port(t)
	path := filepath.Join(t.TempDir(), "Corefile")
	if err := os.WriteFile(path, []byte(corefile(port)), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "-conf", path)
	out := &logBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting CoreDNS: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	polltest.NoComplaint(t, "CoreDNS answering", func() string {
		_, err := dnstest.Send("tcp", addr, new(dns.Msg).SetQuestion(probe, dns.TypeTXT))
		if err != nil {
			return fmt.Sprintf("%v; output:\n%s", err, out.String())
		}
		return ""
	})
	return addr
}
