package skydns

import (
	"fmt"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/dnstest"
	"github.com/kubesky/kubesky/internal/version"
)

// startAnswering starts an embedded etcd and a daemon whose config edit
// changes, for the answer rules shown over real sockets below.
func startAnswering(t *testing.T, edit func(*Config)) (*etcdtest.Server, *Daemon) {
	t.Helper()
	etcd := etcdtest.Start(t)
	cfg := testConfig(etcd.ClientURL())
	edit(&cfg)
	return etcd, startDaemon(t, cfg)
}

func TestApexNSResolvesOverUDPAndTCP(t *testing.T) {
	etcd, d := startAnswering(t, func(c *Config) { c.NSAddrs = []net.IP{net.ParseIP("10.96.0.10")} })
	waitRevision(t, d, put(t, etcd, "web.default.svc.cluster.local.", "a1", `{"host":"10.96.0.1"}`))
	for _, proto := range []string{"udp", "tcp"} {
		t.Run("over "+proto+" the apex NS has the DNS Service's address as glue", func(t *testing.T) {
			resp := dnstest.Ask(t, proto, d.DNSAddr(), "cluster.local.", dns.TypeNS)
			if msg := answerIs(resp, dns.RcodeSuccess, "ns.dns.cluster.local."); msg != "" {
				t.Fatal(msg)
			}
			if len(resp.Extra) == 0 || resp.Extra[0].String() != "ns.dns.cluster.local.\t30\tIN\tA\t10.96.0.10" {
				t.Fatalf("additional section %v, want the A glue of ns.dns.cluster.local.", resp.Extra)
			}
		})
		t.Run("over "+proto+" the NS target answers its address", func(t *testing.T) {
			if msg := answerIs(dnstest.Ask(t, proto, d.DNSAddr(), "ns.dns.cluster.local.", dns.TypeA), dns.RcodeSuccess, "10.96.0.10"); msg != "" {
				t.Fatal(msg)
			}
		})
	}
}

func TestALoneSkyDNSIsItsOwnNameServer(t *testing.T) {
	etcd, d := startAnswering(t, func(c *Config) { c.NSAddrs = nil })
	waitRevision(t, d, put(t, etcd, "web.default.svc.cluster.local.", "a1", `{"host":"10.96.0.1"}`))
	t.Run("without --ns-addrs the NS target answers the 127.0.0.1 skydns listens on", func(t *testing.T) {
		if msg := answerIs(dnstest.Ask(t, "udp", d.DNSAddr(), "ns.dns.cluster.local.", dns.TypeA), dns.RcodeSuccess, "127.0.0.1"); msg != "" {
			t.Fatal(msg)
		}
	})
}

func TestTheNSAddressesComeFromTheFlagOrASpecificListenAddress(t *testing.T) {
	cases := []struct {
		name, dnsAddr, nsAddrs, want string
	}{
		{"--ns-addrs wins over the listen address", "127.0.0.1:1053", "10.96.0.10,fd00::a", "[10.96.0.10 fd00::a]"},
		{"a specific IPv4 listen address stands in", "127.0.0.1:1053", "", "[127.0.0.1]"},
		{"a specific IPv6 listen address stands in", "[fd00::53]:53", "", "[fd00::53]"},
		{"0.0.0.0 names no address", "0.0.0.0:53", "", "[]"},
		{"[::] names no address", "[::]:53", "", "[]"},
		{"a host name names no address", "localhost:53", "", "[]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.DNSAddr = c.dnsAddr
			for ip := range strings.SplitSeq(c.nsAddrs, ",") {
				if ip != "" {
					cfg.NSAddrs = append(cfg.NSAddrs, net.ParseIP(ip))
				}
			}
			if got := fmt.Sprint(cfg.nsAddrs()); got != c.want {
				t.Errorf("NS addresses %s, want %s", got, c.want)
			}
		})
	}
}

// failingUpstream is a DNS server on 127.0.0.1 answering NXDOMAIN for
// gone.example., SERVFAIL for broken.example. and 192.0.2.1 otherwise.
func failingUpstream(t *testing.T) string {
	t.Helper()
	return startUpstream(t, func(q *dns.Msg) *dns.Msg {
		resp := new(dns.Msg).SetReply(q)
		switch strings.ToLower(q.Question[0].Name) {
		case "gone.example.":
			resp.Rcode = dns.RcodeNameError
		case "broken.example.":
			resp.Rcode = dns.RcodeServerFailure
		default:
			rr, _ := dns.NewRR(q.Question[0].Name + " 60 IN A 192.0.2.1")
			resp.Answer = []dns.RR{rr}
		}
		return resp
	})
}

func TestExistingNamesAreNeverDenied(t *testing.T) {
	upstream := failingUpstream(t)
	etcd, d := startAnswering(t, func(c *Config) { c.Forwarder = nil; c.Forward.Upstreams = []string{upstream} })
	put(t, etcd, "web.shop.svc.cluster.local.", "a1", `{"host":"10.96.5.1"}`)
	put(t, etcd, "gone.shop.svc.cluster.local.", "x1", `{"host":"gone.example."}`)
	waitRevision(t, d, put(t, etcd, "broken.shop.svc.cluster.local.", "x1", `{"host":"broken.example."}`))
	cases := []struct{ name, qname string }{
		{"a namespace holding an ExternalName whose target is NXDOMAIN answers its addresses", "shop.svc.cluster.local."},
		{"an ExternalName whose target is NXDOMAIN is NOERROR with its CNAME", "gone.shop.svc.cluster.local."},
		{"an ExternalName whose target fails is NOERROR with its CNAME", "broken.shop.svc.cluster.local."},
	}
	want := map[string][]string{
		"shop.svc.cluster.local.":        {"10.96.5.1"},
		"gone.shop.svc.cluster.local.":   {"gone.example."},
		"broken.shop.svc.cluster.local.": {"broken.example."},
	}
	for _, tc := range cases {
		for _, proto := range []string{"udp", "tcp"} {
			t.Run(tc.name+" over "+proto, func(t *testing.T) {
				if msg := answerIs(dnstest.Ask(t, proto, d.DNSAddr(), tc.qname, dns.TypeA), dns.RcodeSuccess, want[tc.qname]...); msg != "" {
					t.Fatal(msg)
				}
			})
		}
	}
}

func TestDuplicateRecordsAnswerOnce(t *testing.T) {
	etcd, d := startAnswering(t, func(*Config) {})
	put(t, etcd, "_http._tcp.api.default.svc.cluster.local.", "k1", `{"host":"api.example.net.","port":80}`)
	put(t, etcd, "_http._tcp.api.default.svc.cluster.local.", "k2", `{"host":"api.example.net.","port":80}`)
	put(t, etcd, "_http._tcp.api.default.svc.cluster.local.", "k3", `{"host":"api2.example.net.","port":80}`)
	put(t, etcd, "api.default.svc.cluster.local.", "e1", `{"host":"10.244.0.7"}`)
	waitRevision(t, d, put(t, etcd, "api.default.svc.cluster.local.", "e2", `{"host":"10.244.0.7"}`))
	for _, proto := range []string{"udp", "tcp"} {
		t.Run("over "+proto+" two identical SRV keys answer once, weighed over what is left", func(t *testing.T) {
			resp := dnstest.Ask(t, proto, d.DNSAddr(), "_http._tcp.api.default.svc.cluster.local.", dns.TypeSRV)
			if msg := answerIs(resp, dns.RcodeSuccess, "10 50 80 api.example.net.", "10 50 80 api2.example.net."); msg != "" {
				t.Fatal(msg)
			}
		})
		t.Run("over "+proto+" two identical address keys answer once", func(t *testing.T) {
			for range 2 { // the second UDP query is a fast-path hit
				if msg := answerIs(dnstest.Ask(t, proto, d.DNSAddr(), "api.default.svc.cluster.local.", dns.TypeA), dns.RcodeSuccess, "10.244.0.7"); msg != "" {
					t.Fatal(msg)
				}
			}
		})
	}
}

func TestChaosIdentityOverUDPAndTCP(t *testing.T) {
	_, d := startAnswering(t, func(*Config) {})
	hostname, err := os.Hostname()
	if err != nil || hostname == "" {
		t.Skipf("this machine has no host name to answer with (%v)", err)
	}
	want := map[string]string{
		"version.bind.":  "kubesky skydns " + version.Version,
		"hostname.bind.": hostname,
		"id.server.":     hostname,
	}
	for _, proto := range []string{"udp", "tcp"} {
		for name, text := range want {
			t.Run("over "+proto+" "+name+" CH TXT names this server", func(t *testing.T) {
				resp := askClass(t, proto, d.DNSAddr(), name, dns.TypeTXT, dns.ClassCHAOS)
				if msg := answerIs(resp, dns.RcodeSuccess, `"`+text+`"`); msg != "" {
					t.Fatal(msg)
				}
				if resp.Answer[0].Header().Class != dns.ClassCHAOS {
					t.Fatalf("class %s, want CH", dns.ClassToString[resp.Answer[0].Header().Class])
				}
			})
		}
		t.Run("over "+proto+" any other CH question is REFUSED", func(t *testing.T) {
			for _, name := range []string{"authors.bind.", "web.default.svc.cluster.local.", "example.com."} {
				if resp := askClass(t, proto, d.DNSAddr(), name, dns.TypeTXT, dns.ClassCHAOS); resp.Rcode != dns.RcodeRefused {
					t.Errorf("%s CH TXT: %s, want REFUSED", name, dns.RcodeToString[resp.Rcode])
				}
			}
		})
	}
}

// askClass is ask for a class other than IN.
func askClass(t *testing.T, proto, addr, name string, qtype, qclass uint16) *dns.Msg {
	t.Helper()
	m := new(dns.Msg).SetQuestion(name, qtype)
	m.Question[0].Qclass = qclass
	return dnstest.Exchange(t, proto, addr, m)
}

// firstAddresses asks for name n times and returns the first address of
// each answer, checking every answer holds all of want.
func firstAddresses(t *testing.T, proto, addr, name string, n int, want ...string) []string {
	t.Helper()
	var firsts []string
	for range n {
		resp := dnstest.Ask(t, proto, addr, name, dns.TypeA)
		if msg := answerIs(resp, dns.RcodeSuccess, want...); msg != "" {
			t.Fatal(msg)
		}
		firsts = append(firsts, answerData(resp)[0])
	}
	return firsts
}

func TestRotation(t *testing.T) {
	ips := []string{"10.244.0.1", "10.244.0.2", "10.244.0.3"}
	start := func(t *testing.T, rotate bool) *Daemon {
		// One socket: each socket's fast path turns on its own.
		etcd, d := startAnswering(t, func(c *Config) { c.Rotate, c.UDPSockets = rotate, 1 })
		var rev int64
		for i, ip := range ips {
			rev = put(t, etcd, "db.default.svc.cluster.local.", fmt.Sprintf("db-%d", i), `{"host":"`+ip+`"}`)
		}
		waitRevision(t, d, rev)
		return d
	}
	t.Run("with --rotate every address comes first in turn", func(t *testing.T) {
		d := start(t, true)
		for _, proto := range []string{"udp", "tcp"} { // udp: the fast path, tcp: the ordinary one
			firsts := firstAddresses(t, proto, d.DNSAddr(), "db.default.svc.cluster.local.", 6, ips...)
			if got := strings.Join(sorted(firsts), " "); got != "10.244.0.1 10.244.0.1 10.244.0.2 10.244.0.2 10.244.0.3 10.244.0.3" {
				t.Errorf("over %s the first addresses of six answers are %v, want each address twice", proto, firsts)
			}
		}
	})
	t.Run("with --rotate a headless SRV answer with glue turns in the fast path", func(t *testing.T) {
		etcd, d := startAnswering(t, func(c *Config) { c.UDPSockets = 1 })
		var rev int64
		for i, ip := range ips {
			host := fmt.Sprintf("db-%d.db.default.svc.cluster.local.", i)
			put(t, etcd, host, "a", `{"host":"`+ip+`"}`)
			rev = put(t, etcd, "_pg._tcp.db.default.svc.cluster.local.", fmt.Sprintf("db-%d", i), `{"host":"`+host+`","port":5432}`)
		}
		waitRevision(t, d, rev)
		fastBefore := d.metrics.answers.Totals().FastAnswers
		var firsts []string
		for range 6 {
			resp := dnstest.Ask(t, "udp", d.DNSAddr(), "_pg._tcp.db.default.svc.cluster.local.", dns.TypeSRV)
			if len(resp.Answer) != 3 || len(resp.Extra) < 3 {
				t.Fatalf("answer %v additional %v: want three SRV records and their glue", resp.Answer, resp.Extra)
			}
			firsts = append(firsts, resp.Answer[0].(*dns.SRV).Target)
		}
		if got := strings.Join(sorted(firsts), " "); got != "db-0.db.default.svc.cluster.local. db-0.db.default.svc.cluster.local. db-1.db.default.svc.cluster.local. db-1.db.default.svc.cluster.local. db-2.db.default.svc.cluster.local. db-2.db.default.svc.cluster.local." {
			t.Errorf("first targets of six answers %v, want each target twice", firsts)
		}
		if fast := d.metrics.answers.Totals().FastAnswers - fastBefore; fast < 6 {
			t.Errorf("the fast path answered %d of 6 queries, want all", fast)
		}
	})
	t.Run("with --rotate=false the order stays", func(t *testing.T) {
		d := start(t, false)
		for _, proto := range []string{"udp", "tcp"} {
			firsts := firstAddresses(t, proto, d.DNSAddr(), "db.default.svc.cluster.local.", 4, ips...)
			if got := strings.Join(firsts, " "); got != "10.244.0.1 10.244.0.1 10.244.0.1 10.244.0.1" {
				t.Errorf("over %s the first addresses are %v, want the first key's every time", proto, firsts)
			}
		}
	})
}
