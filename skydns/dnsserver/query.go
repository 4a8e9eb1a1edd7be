package dnsserver

import (
	"context"
	"net"
	"net/netip"
	"time"

	"github.com/miekg/dns"
)

// Query is one well-formed query as received: its message has exactly one
// question and opcode QUERY.
type Query struct {
	Msg    *dns.Msg
	Client netip.Addr // the requester's address
	Proto  string     // "udp" or "tcp"
}

// Responder builds the response to a Query. The response must be addressed
// to the query (dns.Msg.SetReply); the server then sets the EDNS record and
// truncates it. Returning nil makes the server answer SERVFAIL. The context
// ends at Config.QueryTimeout or at shutdown.
type Responder interface {
	Respond(ctx context.Context, q Query) *dns.Msg
}

// RespondFunc adapts a function to a Responder.
type RespondFunc func(ctx context.Context, q Query) *dns.Msg

// Respond calls f.
func (f RespondFunc) Respond(ctx context.Context, q Query) *dns.Msg { return f(ctx, q) }

// Exchange describes one answered query, for metrics.
type Exchange struct {
	Proto    string   // "udp" or "tcp"
	TLS      bool     // the "tcp" connection is DNS over TLS
	Client   net.Addr // the requester's address and port
	Request  *dns.Msg
	Response *dns.Msg // as written, after truncation
	Duration time.Duration
}
