// Package fixed is the practical limit of the DNS server: an Responder that
// answers every query with the same A record, doing no lookup at all,
// served by skydns/dnsserver as skydns's answers are. The benchmark
// compares skydns against it to see what the resolver costs over the
// protocol layer.
package fixed

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/skydns/dnsserver"
)

// Responder answers every query with one A record for the question's name.
type Responder struct {
	addr [4]byte
	ttl  uint32
}

var _ dnsserver.Responder = (*Responder)(nil)

// NewResponder returns a Responder answering with addr, an IPv4 address.
func NewResponder(addr netip.Addr, ttl uint32) (*Responder, error) {
	if !addr.Is4() {
		return nil, fmt.Errorf("fixed answer %s is not an IPv4 address", addr)
	}
	return &Responder{addr: addr.As4(), ttl: ttl}, nil
}

// Respond returns the fixed answer to q (dnsserver has already answered a
// query without a question with FORMERR).
func (a *Responder) Respond(_ context.Context, q dnsserver.Query) *dns.Msg {
	resp := new(dns.Msg).SetReply(q.Msg)
	resp.Authoritative = true
	resp.Answer = []dns.RR{&dns.A{
		Hdr: dns.RR_Header{Name: q.Msg.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: a.ttl},
		A:   a.addr[:],
	}}
	return resp
}

// Start serves a on addr (host:port, port 0 picks one) over UDP and TCP.
func Start(addr string, a *Responder) (*dnsserver.Server, error) {
	return dnsserver.Start(dnsserver.Config{Addr: addr, Responder: a})
}
