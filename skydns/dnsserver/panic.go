package dnsserver

import (
	"github.com/miekg/dns"
)

// recoverQuery, deferred by ServeDNS, stops a panic of one query from
// ending the process: it reports the panic with the query's packet and
// answers SERVFAIL.
func (h *handler) recoverQuery(w dns.ResponseWriter, req *dns.Msg, proto string) {
	v := recover()
	if v == nil {
		return
	}
	h.panicked(proto, PackForLog(req), v)
	resp := new(dns.Msg).SetRcode(req, dns.RcodeServerFailure)
	if err := w.WriteMsg(resp); err != nil {
		h.logger.Debug("writing SERVFAIL after a panic", "proto", proto, "err", err)
	}
	h.observe(Exchange{Proto: proto, TLS: overTLS(w), Client: w.RemoteAddr(), Request: req, Response: resp})
}

// PackForLog is m in wire format for a log line, or nil when m does not
// pack: a message that caused a panic may not.
func PackForLog(m *dns.Msg) (wire []byte) {
	defer func() {
		if recover() != nil {
			wire = nil
		}
	}()
	wire, err := m.Pack()
	if err != nil {
		return nil
	}
	return wire
}
