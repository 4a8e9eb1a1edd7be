package dnsserver

import "github.com/miekg/dns"

// unknownKey is the answer to req, a query signed with TSIG: the server
// holds no key, so every key is unknown (RFC 8945 §5.2.2): NOTAUTH with
// an unsigned TSIG record (no MAC) that carries BADKEY and the query's
// key name, algorithm, time and ID, after an OPT record when req has one.
func unknownKey(req *dns.Msg, maxUDPSize int) *dns.Msg {
	sig := req.IsTsig()
	resp := new(dns.Msg).SetRcode(req, dns.RcodeNotAuth)
	if opt := req.IsEdns0(); opt != nil {
		resp.SetEdns0(uint16(maxUDPSize), false)
	}
	resp.Extra = append(resp.Extra, &dns.TSIG{
		Hdr:        dns.RR_Header{Name: sig.Hdr.Name, Rrtype: dns.TypeTSIG, Class: dns.ClassANY},
		Algorithm:  sig.Algorithm,
		TimeSigned: sig.TimeSigned,
		Fudge:      sig.Fudge,
		OrigId:     sig.OrigId,
		Error:      dns.RcodeBadKey,
	})
	return resp
}
