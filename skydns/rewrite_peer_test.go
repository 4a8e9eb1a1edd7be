package skydns

import (
	"fmt"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/dnstest"
	"github.com/kubesky/kubesky/internal/polltest"
)

// rewriteUpstream answers every A question for N with N's address
// 192.0.2.1, and one for www.N with a CNAME to N first: the names the
// rules make show in the answer.
func rewriteUpstream(q *dns.Msg) *dns.Msg {
	m := new(dns.Msg).SetReply(q)
	name := strings.ToLower(q.Question[0].Name)
	if q.Question[0].Qtype != dns.TypeA {
		return m
	}
	if target, ok := strings.CutPrefix(name, "www."); ok {
		m.Answer = append(m.Answer, &dns.CNAME{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeCNAME, Class: dns.ClassINET, Ttl: 30}, Target: target})
		name = target
	}
	m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 30}, A: []byte{192, 0, 2, 1}})
	return m
}

// The rewrite plugin README's name rule examples (and the forms its text
// describes: exact answers always mapped back, continue, a prefix, a
// block), each read from the same Corefile lines by CoreDNS and by
// kubesky's Corefile reader for skydns, both forwarding to one upstream:
// every answer must be the same, question included.
func TestRewriteRulesAnswerAsCoreDNSDoes(t *testing.T) {
	coredns := coreDNSBinary(t)
	upstream := startUpstream(t, rewriteUpstream)
	etcd := etcdtest.Start(t)
	cases := []struct {
		corefile string // lines of the root's server block
		qnames   []string
		// questionDiffers: CoreDNS answers with the rewritten question
		// when the matching rules end with a continue rule that maps no
		// answer back (a client discards such an answer); skydns always
		// answers with the client's question.
		questionDiffers string
	}{
		{"rewrite name substring service.us-west-1.example.org service.us-west-1.consul",
			[]string{"ftp.service.us-west-1.example.org.", "www.service.us-west-1.example.org.", "ftp.example.org."}, ""},
		{`rewrite name regex (.*)-(us-west-1)\.example\.org {1}.service.{2}.consul`,
			[]string{"ftp-us-west-1.example.org.", "FTP-us-west-1.Example.org.", "ftp-us-east-1.example.org."}, ""},
		{"rewrite name suffix .schmoogle.com. .google.com.",
			[]string{"www.schmoogle.com.", "mail.schmoogle.com.", "schmoogle.com."}, ""},
		{`rewrite name regex (.*)-(us-west-1)\.coredns\.rocks {1}.service.{2}.consul answer auto`,
			[]string{"ftp-us-west-1.coredns.rocks.", "www-us-west-1.coredns.rocks."}, ""},
		{"rewrite stop {\n        name suffix .coredns.rocks .service.consul answer auto\n    }",
			[]string{"www.ftp.coredns.rocks.", "ftp.coredns.rocks."}, ""},
		{"rewrite name a.example.org www.b.example.org",
			[]string{"a.example.org.", "www.a.example.org."}, ""},
		{"rewrite name prefix www web answer auto",
			[]string{"www.example.net.", "www.www.example.net."}, ""},
		{"rewrite continue name suffix .a.example .b.example\n    rewrite name prefix foo bar answer auto",
			[]string{"foo.a.example.", "www.a.example.", "foo.c.example."}, "www.a.example."},
	}
	for _, c := range cases {
		t.Run(c.corefile, func(t *testing.T) {
			reference := runCoreDNS(t, coredns, func(port int) string {
				return fmt.Sprintf(".:%d {\n    bind 127.0.0.1\n    %s\n    forward . %s\n}\n", port, c.corefile, upstream)
			}, "ready.example.")
			cfg := testConfig(etcd.ClientURL())
			cfg.Forwarder, cfg.Forward.Upstreams = nil, []string{upstream}
			cfg.Rewrites = translatedFlag(t, c.corefile, "rewrite")
			d := startDaemon(t, cfg)
			for _, qname := range c.qnames {
				ours := dnstest.Ask(t, "udp", d.DNSAddr(), qname, dns.TypeA)
				theirs := dnstest.Ask(t, "udp", reference, qname, dns.TypeA)
				sameQuestion := ours.Question[0].Name == theirs.Question[0].Name
				switch {
				case ours.Question[0].Name != qname:
					t.Errorf("%s: skydns answered the question %s", qname, ours.Question[0].Name)
				case qname == c.questionDiffers && sameQuestion:
					t.Errorf("%s: CoreDNS now answers with the client's question too: update this case", qname)
				case qname != c.questionDiffers && !sameQuestion:
					t.Errorf("%s: question %s, CoreDNS's %s", qname, ours.Question[0].Name, theirs.Question[0].Name)
				}
				if len(ours.Answer) == 0 {
					t.Errorf("%s: no answer: the case proves nothing", qname)
				}
				compareAnswers(t, "", render(ours), render(theirs))
			}
		})
	}
}

// TestARewriteReachesTheZones: the common use, a name outside the cluster
// aliased to a Service, answered from the zones under the client's name
// over UDP (the fast path is off with rewrites) and TCP; a rule making an
// invalid name gets SERVFAIL.
func TestARewriteReachesTheZones(t *testing.T) {
	etcd := etcdtest.Start(t)
	cfg := testConfig(etcd.ClientURL())
	cfg.Rewrites = []string{"name db.example.com db.default.svc.cluster.local", `name regex (.*)\.bad\.example {1}{1}{1}{1}{1}.x`}
	d := startDaemon(t, cfg)
	put(t, etcd, "db.default.svc.cluster.local.", "a1", `{"host":"10.96.0.20"}`)
	for _, proto := range []string{"udp", "tcp"} {
		polltest.Eventually(t, "db.example.com over "+proto, func() error {
			resp := dnstest.Ask(t, proto, d.DNSAddr(), "db.example.com.", dns.TypeA)
			if msg := answerIs(resp, dns.RcodeSuccess, "10.96.0.20"); msg != "" {
				return fmt.Errorf("%s", msg)
			}
			if resp.Question[0].Name != "db.example.com." || resp.Answer[0].Header().Name != "db.example.com." {
				return fmt.Errorf("question %s, owner %s: want the client's name", resp.Question[0].Name, resp.Answer[0].Header().Name)
			}
			return nil
		})
	}
	long := strings.Repeat("a", 60) + ".bad.example."
	if resp := dnstest.Ask(t, "udp", d.DNSAddr(), long, dns.TypeA); resp.Rcode != dns.RcodeServerFailure {
		t.Fatalf("rcode %s for a rewrite to an invalid name, want SERVFAIL", dns.RcodeToString[resp.Rcode])
	}
}
