package template

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

func TestBadTemplatesAreRefusedWithTheReason(t *testing.T) {
	cases := map[string]string{
		`not json`: "invalid character",
		`{"class":"IN","type":"A","zones":["a."],"colour":"red"}`:                 "unknown field",
		`{"class":"XX","type":"A","zones":["a."]}`:                                `class "XX"`,
		`{"class":"IN","type":"AX","zones":["a."]}`:                               `type "AX"`,
		`{"class":"IN","type":"A"}`:                                               "no zone",
		`{"class":"IN","type":"A","zones":["a."],"rcode":"SOMETIMES"}`:            `rcode "SOMETIMES"`,
		`{"class":"IN","type":"A","zones":["a."],"match":["(x"]}`:                 "not a regular expression",
		`{"class":"IN","type":"A","zones":["a."],"answer":["{{ .Name } 1 IN A"]}`: "record",
	}
	for value, want := range cases {
		if _, err := Parse(value); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%s): %v, want an error saying %q", value, err, want)
		}
	}
}

func TestARecordThatDoesNotParseIsServfail(t *testing.T) {
	s, err := ParseAll([]string{`{"class":"IN","type":"A","zones":["a."],"answer":["{{ .Name }} 60 IN A not-an-address"]}`})
	if err != nil {
		t.Fatal(err)
	}
	m := s.Answer(new(dns.Msg).SetQuestion("x.a.", dns.TypeA), netip.MustParseAddr("127.0.0.1"))
	if m == nil || m.Rcode != dns.RcodeServerFailure {
		t.Fatalf("answer %v, want SERVFAIL", m)
	}
	if m := s.Answer(new(dns.Msg).SetQuestion("x.b.", dns.TypeA), netip.MustParseAddr("127.0.0.1")); m != nil {
		t.Fatalf("a name outside the templates' zones answered: %v", m)
	}
}
