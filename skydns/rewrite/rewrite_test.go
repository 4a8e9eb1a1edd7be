package rewrite

import (
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// The cases are the CoreDNS rewrite plugin README's name rule examples.
func TestRulesRewriteTheQuestionAndMapTheAnswerBack(t *testing.T) {
	cases := []struct {
		rules    []string
		qname    string
		asked    string   // the name the rewritten query asks for; "" when no rule matches
		answer   []string // the answer to the rewritten query
		answered []string // what the client gets
	}{
		{[]string{"name substring service.us-west-1.example.org service.us-west-1.consul"},
			"ftp.service.us-west-1.example.org.", "ftp.service.us-west-1.consul.", nil, nil},
		{[]string{`name regex (.*)-(us-west-1)\.example\.org {1}.service.{2}.consul`},
			"FTP-us-west-1.example.org.", "ftp.service.us-west-1.consul.", nil, nil},
		{[]string{"name suffix .schmoogle.com. .google.com."}, "www.schmoogle.com.", "www.google.com.",
			[]string{"www.google.com.\t30\tIN\tA\t192.0.2.1"}, []string{"www.google.com.\t30\tIN\tA\t192.0.2.1"}},
		{[]string{"stop name suffix .coredns.rocks .service.consul answer auto"}, "www.ftp.coredns.rocks.", "www.ftp.service.consul.",
			[]string{"www.ftp.service.consul.\t30\tIN\tCNAME\tftp.service.consul."},
			[]string{"www.ftp.coredns.rocks.\t30\tIN\tCNAME\tftp.coredns.rocks."}},
		{[]string{`name regex (.*)-(us-west-1)\.coredns\.rocks {1}.service.{2}.consul answer auto`}, "www-us-west-1.coredns.rocks.", "www.service.us-west-1.consul.",
			[]string{"www.service.us-west-1.consul.\t30\tIN\tCNAME\tservice.us-west-1.consul."},
			[]string{"www-us-west-1.coredns.rocks.\t30\tIN\tCNAME\tservice.us-west-1.consul."}},
		{[]string{"name a.example.org b.example.org"}, "a.example.org.", "b.example.org.",
			[]string{"b.example.org.\t30\tIN\tA\t192.0.2.1"}, []string{"a.example.org.\t30\tIN\tA\t192.0.2.1"}},
		{[]string{"name a.example.org b.example.org"}, "www.a.example.org.", "", nil, nil},
		{[]string{"continue name suffix .a.example .b.example", "name prefix foo bar answer auto"}, "foo.a.example.", "bar.b.example.",
			[]string{"bar.b.example.\t30\tIN\tA\t192.0.2.1"}, []string{"foo.b.example.\t30\tIN\tA\t192.0.2.1"}},
		{[]string{"stop name suffix .a.example .b.example", "name prefix foo bar"}, "foo.a.example.", "foo.b.example.", nil, nil},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.rules, "; ")+" "+c.qname, func(t *testing.T) {
			rules, err := ParseAll(c.rules)
			if err != nil {
				t.Fatal(err)
			}
			req := new(dns.Msg).SetQuestion(c.qname, dns.TypeA)
			w, err := rules.Apply(req)
			if err != nil {
				t.Fatal(err)
			}
			if c.asked == "" {
				if w != nil {
					t.Fatalf("rewritten to %s, want no rule to match", w.Query.Question[0].Name)
				}
				return
			}
			if w == nil || w.Query.Question[0].Name != c.asked {
				t.Fatalf("rewritten %+v, want %s", w, c.asked)
			}
			resp := new(dns.Msg).SetReply(w.Query)
			for _, s := range c.answer {
				rr, err := dns.NewRR(s)
				if err != nil {
					t.Fatal(err)
				}
				resp.Answer = append(resp.Answer, rr)
			}
			got := w.Answer(resp)
			if got.Question[0].Name != c.qname {
				t.Errorf("question %s, want the client's %s", got.Question[0].Name, c.qname)
			}
			for i, rr := range got.Answer {
				if rr.String() != c.answered[i] {
					t.Errorf("answer %q, want %q", rr.String(), c.answered[i])
				}
			}
		})
	}
}

func TestBadRulesAreRefusedWithTheReason(t *testing.T) {
	cases := map[string]string{
		"type A AAAA":                      "only name rules",
		"name":                             "want name",
		"name wildcard a b":                "want exact, prefix",
		"name regex ( a":                   "regular expression",
		"name regex (a) {2}.b":             "uses group {2}",
		"name suffix a b answer name x y":  "want name",
		"continue":                         "only name rules",
		"name exact a b answer auto extra": "want name",
	}
	for text, want := range cases {
		if _, err := Parse(text); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q): %v, want an error saying %q", text, err, want)
		}
	}
}

func TestARewriteToAnInvalidNameIsAnError(t *testing.T) {
	rules, _ := ParseAll([]string{`name regex (.*)\.example\.org {1}{1}{1}{1}{1}.x`})
	long := strings.Repeat("a", 60) + ".example.org."
	if _, err := rules.Apply(new(dns.Msg).SetQuestion(long, dns.TypeA)); err == nil {
		t.Fatal("a rewrite to a 64-character label was taken")
	}
}
