package skydns

import (
	"fmt"
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/corefile"
	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/dnstest"
)

// The template plugin README's examples (but for ederror), read from the
// same Corefile lines by CoreDNS and by kubesky's Corefile reader for
// skydns, both forwarding the rest to one upstream: every answer the
// same.
func TestTemplatesAnswerAsCoreDNSDoes(t *testing.T) {
	coredns := coreDNSBinary(t)
	upstream := startUpstream(t, rewriteUpstream)
	etcd := etcdtest.Start(t)
	type question struct {
		name  string
		qtype uint16
	}
	cases := []struct {
		corefile  string
		questions []question
	}{
		{"template ANY ANY invalid {\n      rcode NXDOMAIN\n      authority \"invalid. 60 {{ .Class }} SOA ns.invalid. hostmaster.invalid. (1 60 60 60 60)\"\n    }",
			[]question{{"www.invalid.", dns.TypeA}, {"invalid.", dns.TypeMX}, {"www.example.org.", dns.TypeA}}},
		{"template IN ANY example.com.dc1.example.com {\n      rcode NXDOMAIN\n      authority \"{{ .Zone }} 60 IN SOA ns.example.com hostmaster.example.com (1 60 60 60 60)\"\n    }",
			[]question{{"something.example.com.dc1.example.com.", dns.TypeA}, {"www.dc1.example.com.", dns.TypeA}}},
		{"template IN ANY example.com {\n      match \"example\\.com\\.(dc1\\.example\\.com\\.)$\"\n      rcode NXDOMAIN\n      authority \"{{ index .Match 1 }} 60 IN SOA ns.{{ index .Match 1 }} hostmaster.{{ index .Match 1 }} (1 60 60 60 60)\"\n      fallthrough\n    }",
			[]question{{"something.example.com.dc1.example.com.", dns.TypeA}, {"www.example.com.", dns.TypeA}}},
		{"template IN A example {\n      match (^|[.])ip-(?P<a>[0-9]*)-(?P<b>[0-9]*)-(?P<c>[0-9]*)-(?P<d>[0-9]*)[.]example[.]$\n      answer \"{{ .Name }} 60 IN A {{ .Group.a }}.{{ .Group.b }}.{{ .Group.c }}.{{ .Group.d }}\"\n      fallthrough\n    }",
			[]question{{"ip-10-1-2-3.example.", dns.TypeA}, {"www.ip-10-1-2-3.example.", dns.TypeA}, {"www.example.", dns.TypeA}, {"ip-10-1-2-3.example.", dns.TypeAAAA}}},
		{"template IN A example {\n      match \"^ip0a(?P<b>[a-f0-9]{2})(?P<c>[a-f0-9]{2})(?P<d>[a-f0-9]{2})[.]example[.]$\"\n      answer \"{{ .Name }} 60 IN A 10.{{ parseInt .Group.b 16 8 }}.{{ parseInt .Group.c 16 8 }}.{{ parseInt .Group.d 16 8 }}\"\n      fallthrough\n    }",
			[]question{{"ip0a5f0c09.example.", dns.TypeA}, {"ip0azz.example.", dns.TypeA}}},
		{"template IN A example {\n      match ^only[.]example[.]$\n      answer \"{{ .Name }} 60 IN A 192.0.2.7\"\n    }",
			[]question{{"only.example.", dns.TypeA}, {"other.example.", dns.TypeA}}},
	}
	for _, c := range cases {
		t.Run(c.corefile, func(t *testing.T) {
			reference := runCoreDNS(t, coredns, func(port int) string {
				return fmt.Sprintf(".:%d {\n    bind 127.0.0.1\n    forward . %s\n    %s\n}\n", port, upstream, c.corefile)
			}, "ready.example.org.")
			cfg := testConfig(etcd.ClientURL())
			cfg.Forwarder, cfg.Forward.Upstreams = nil, []string{upstream}
			cfg.Templates = translatedFlag(t, c.corefile, "template")
			d := startDaemon(t, cfg)
			for _, q := range c.questions {
				ours := dnstest.Ask(t, "udp", d.DNSAddr(), q.name, q.qtype)
				theirs := dnstest.Ask(t, "udp", reference, q.name, q.qtype)
				if ours.Authoritative != theirs.Authoritative {
					t.Errorf("%s: AA %v, CoreDNS's %v", q.name, ours.Authoritative, theirs.Authoritative)
				}
				compareAnswers(t, "", render(ours), render(theirs))
			}
		})
	}
}

// translatedFlag is the values of skydns's --flag for a root server block
// holding lines, as kubesky's Corefile reader translates it.
func translatedFlag(t *testing.T, lines, flag string) []string {
	t.Helper()
	opts := corefile.DefaultOptions()
	opts.ReadKey = corefile.KeysOf(peerConfigMap)
	plan, err := corefile.ReadUsable("Corefile", []byte(".:53 {\n    "+lines+"\n}\n"), opts)
	if err != nil {
		t.Fatal(err)
	}
	var values []string
	for _, s := range plan.Settings {
		if s.Daemon == "skydns" && s.Flag == flag {
			values = append(values, s.Value)
		}
	}
	if len(values) == 0 {
		t.Fatalf("no --%s from %q", flag, lines)
	}
	return values
}
