// Package fixed is the practical limit of a miekg/dns server: a handler
// that answers every query with the same A record, doing no lookup at all.
// The benchmark compares skydns against it to see what the resolver costs
// over the protocol layer.
package fixed

import (
	"fmt"
	"net/netip"

	"github.com/miekg/dns"
)

// Handler answers every query with one A record for the question's name.
type Handler struct {
	addr [4]byte
	ttl  uint32
}

// NewHandler returns a Handler answering with addr, an IPv4 address.
func NewHandler(addr netip.Addr, ttl uint32) (*Handler, error) {
	if !addr.Is4() {
		return nil, fmt.Errorf("fixed answer %s is not an IPv4 address", addr)
	}
	return &Handler{addr: addr.As4(), ttl: ttl}, nil
}

// ServeDNS writes the fixed answer; a query without a question gets FORMERR.
func (h *Handler) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	resp := new(dns.Msg)
	if len(req.Question) != 1 {
		resp.SetRcode(req, dns.RcodeFormatError)
		w.WriteMsg(resp)
		return
	}
	resp.SetReply(req)
	resp.Authoritative = true
	resp.Answer = []dns.RR{&dns.A{
		Hdr: dns.RR_Header{Name: req.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: h.ttl},
		A:   h.addr[:],
	}}
	w.WriteMsg(resp)
}
