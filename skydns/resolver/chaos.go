package resolver

import (
	"strings"

	"github.com/miekg/dns"
)

// chaosText returns the text answering a TXT question of class CH that
// names this server: version.bind. (Config.Version), hostname.bind. and
// id.server. (Config.Hostname). Any other CH question, or one whose text is
// not configured, is not an identity question.
func (r *Resolver) chaosText(req *dns.Msg) (string, bool) {
	if req.Opcode != dns.OpcodeQuery || len(req.Question) != 1 {
		return "", false
	}
	q := req.Question[0]
	if q.Qclass != dns.ClassCHAOS || q.Qtype != dns.TypeTXT {
		return "", false
	}
	var text string
	switch strings.ToLower(dns.Fqdn(q.Name)) {
	case "version.bind.":
		text = r.version
	case "hostname.bind.", "id.server.":
		text = r.hostname
	}
	return text, text != ""
}

// chaos answers an identity question with one CH TXT record, TTL 0 so no
// cache hides which replica answered.
func chaos(req *dns.Msg, text string) *dns.Msg {
	resp := new(dns.Msg).SetReply(req)
	resp.Authoritative = true
	q := req.Question[0]
	resp.Answer = []dns.RR{&dns.TXT{
		Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeTXT, Class: dns.ClassCHAOS},
		Txt: split255(text),
	}}
	return resp
}
