// Package template answers questions from CoreDNS template plugin
// blocks, with that plugin's meaning: a template matches a question of its
// class and type under one of its zones whose name one of its regular
// expressions matches, and answers it with its rcode and the records its
// Go templates make. A question under the templates' zones that no
// template matches gets SERVFAIL, unless the templates fall through for
// it; then it is answered as if there were no templates.
//
// skydns takes each template as one --template flag, JSON made by the
// Corefile reader: {"class":"IN","type":"A","zones":["example."],
// "match":["^x\\.example\\.$"],"answer":["{{ .Name }} 60 IN A 192.0.2.1"],
// "rcode":"NOERROR","fallthrough":true,"fallthroughZones":[]}.
package template

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	gotemplate "text/template"

	"github.com/miekg/dns"
)

// Spec is one template as its flag gives it.
type Spec struct {
	Class            string   `json:"class"`
	Type             string   `json:"type"`
	Zones            []string `json:"zones"`
	Match            []string `json:"match,omitempty"`
	Answer           []string `json:"answer,omitempty"`
	Additional       []string `json:"additional,omitempty"`
	Authority        []string `json:"authority,omitempty"`
	Rcode            string   `json:"rcode,omitempty"`
	Fallthrough      bool     `json:"fallthrough,omitempty"`
	FallthroughZones []string `json:"fallthroughZones,omitempty"`
}

// Template is one compiled Spec.
type Template struct {
	qclass, qtype uint16 // dns.ClassANY, dns.TypeANY: any
	zones         []string
	match         []*regexp.Regexp
	answer        []*gotemplate.Template
	additional    []*gotemplate.Template
	authority     []*gotemplate.Template
	rcode         int
	fall          bool
	fallZones     []string // empty: every name
}

// Parse compiles one --template value.
func Parse(value string) (*Template, error) {
	var s Spec
	dec := json.NewDecoder(strings.NewReader(value))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("template %s: %w", value, err)
	}
	t, err := compile(s)
	if err != nil {
		return nil, fmt.Errorf("template %s: %w", value, err)
	}
	return t, nil
}

func compile(s Spec) (*Template, error) {
	t := &Template{fall: s.Fallthrough, zones: fqdns(s.Zones), fallZones: fqdns(s.FallthroughZones)}
	var ok bool
	if t.qclass, ok = dns.StringToClass[strings.ToUpper(s.Class)]; !ok && !strings.EqualFold(s.Class, "ANY") {
		return nil, fmt.Errorf("class %q", s.Class)
	}
	if strings.EqualFold(s.Class, "ANY") {
		t.qclass = dns.ClassANY
	}
	if t.qtype, ok = dns.StringToType[strings.ToUpper(s.Type)]; !ok {
		return nil, fmt.Errorf("type %q", s.Type)
	}
	if len(t.zones) == 0 {
		return nil, fmt.Errorf("no zone")
	}
	if t.rcode, ok = rcodeOf(s.Rcode); !ok {
		return nil, fmt.Errorf("rcode %q", s.Rcode)
	}
	if len(s.Match) == 0 {
		s.Match = []string{".*"}
	}
	for _, m := range s.Match {
		re, err := regexp.Compile(m)
		if err != nil || len(m) > 10000 {
			return nil, fmt.Errorf("match %q: not a regular expression of at most 10000 characters", m)
		}
		t.match = append(t.match, re)
	}
	var err error
	for _, sec := range []struct {
		texts []string
		out   *[]*gotemplate.Template
	}{{s.Answer, &t.answer}, {s.Additional, &t.additional}, {s.Authority, &t.authority}} {
		if *sec.out, err = parseRecords(sec.texts); err != nil {
			return nil, err
		}
	}
	return t, nil
}

func rcodeOf(s string) (int, bool) {
	if s == "" {
		return dns.RcodeSuccess, true
	}
	rcode, ok := dns.StringToRcode[strings.ToUpper(s)]
	return rcode, ok
}

func parseRecords(texts []string) ([]*gotemplate.Template, error) {
	var out []*gotemplate.Template
	for _, text := range texts {
		t, err := gotemplate.New("rr").Funcs(gotemplate.FuncMap{"parseInt": strconv.ParseUint}).Parse(text)
		if err != nil {
			return nil, fmt.Errorf("record %q: %w", text, err)
		}
		out = append(out, t)
	}
	return out, nil
}

func fqdns(names []string) []string {
	var out []string
	for _, n := range names {
		out = append(out, strings.ToLower(dns.Fqdn(n)))
	}
	return out
}

// zoneOf returns the longest of zones name is at or under; "" when none.
func zoneOf(zones []string, name string) string {
	best := ""
	for _, z := range zones {
		if dns.IsSubDomain(z, name) && len(z) > len(best) {
			best = z
		}
	}
	return best
}

// data is what a record's Go template reads.
type data struct {
	Zone     string
	Name     string
	Class    string
	Type     string
	Match    []string
	Group    map[string]string
	Message  *dns.Msg
	Question *dns.Question
	Remote   string
}

// Set is the templates of a server, in order.
type Set struct {
	templates []*Template
	zones     []string
}

// ParseAll compiles one template from each --template value.
func ParseAll(values []string) (*Set, error) {
	s := &Set{}
	for _, v := range values {
		t, err := Parse(v)
		if err != nil {
			return nil, err
		}
		s.templates = append(s.templates, t)
		s.zones = append(s.zones, t.zones...)
	}
	return s, nil
}

// Answer returns the templates' answer to req from client, or nil when
// they leave it to the rest of the server.
func (s *Set) Answer(req *dns.Msg, client netip.Addr) *dns.Msg {
	if s == nil || len(s.templates) == 0 || len(req.Question) != 1 {
		return nil
	}
	name := strings.ToLower(dns.Fqdn(req.Question[0].Name))
	if zoneOf(s.zones, name) == "" {
		return nil
	}
	for _, t := range s.templates {
		d, matched, fall := t.matches(req, name)
		switch {
		case matched:
			d.Remote = client.String()
			return t.reply(req, d)
		case !fall:
			return new(dns.Msg).SetRcode(req, dns.RcodeServerFailure)
		}
	}
	return nil
}

// matches says whether t answers req for name, and if not, whether it
// lets the next template or the server answer.
func (t *Template) matches(req *dns.Msg, name string) (*data, bool, bool) {
	q := req.Question[0]
	zone := zoneOf(t.zones, name)
	switch {
	case zone == "":
		return nil, false, true
	case t.qclass != dns.ClassANY && q.Qclass != dns.ClassANY && q.Qclass != t.qclass:
		return nil, false, true
	case t.qtype != dns.TypeANY && q.Qtype != dns.TypeANY && q.Qtype != t.qtype:
		return nil, false, true
	}
	for _, re := range t.match {
		groups := re.FindStringSubmatch(name)
		if groups == nil {
			continue
		}
		d := &data{Zone: zone, Name: name, Class: dns.ClassToString[q.Qclass], Type: dns.TypeToString[q.Qtype],
			Match: groups, Group: map[string]string{}, Message: req, Question: &q}
		for i, g := range re.SubexpNames() {
			if g != "" {
				d.Group[g] = groups[i]
			}
		}
		return d, true, false
	}
	return nil, false, t.fall && (len(t.fallZones) == 0 || zoneOf(t.fallZones, name) != "")
}

// reply is t's answer with d; SERVFAIL when a record does not come out
// as one.
func (t *Template) reply(req *dns.Msg, d *data) *dns.Msg {
	if t.rcode == dns.RcodeServerFailure {
		return new(dns.Msg).SetRcode(req, dns.RcodeServerFailure)
	}
	m := new(dns.Msg).SetReply(req)
	m.Authoritative, m.Rcode = true, t.rcode
	for _, sec := range []struct {
		templates []*gotemplate.Template
		out       *[]dns.RR
	}{{t.answer, &m.Answer}, {t.additional, &m.Extra}, {t.authority, &m.Ns}} {
		for _, tmpl := range sec.templates {
			rr, err := record(tmpl, d)
			if err != nil {
				return new(dns.Msg).SetRcode(req, dns.RcodeServerFailure)
			}
			*sec.out = append(*sec.out, rr)
		}
	}
	return m
}

func record(tmpl *gotemplate.Template, d *data) (dns.RR, error) {
	var b bytes.Buffer
	if err := tmpl.Execute(&b, d); err != nil {
		return nil, err
	}
	rr, err := dns.NewRR(b.String())
	if err == nil && rr == nil {
		err = fmt.Errorf("empty record")
	}
	return rr, err
}
