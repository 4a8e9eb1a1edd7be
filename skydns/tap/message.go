package tap

import (
	"net"
	"net/netip"
	"time"

	dnstap "github.com/dnstap/golang-dnstap"
)

// Transport is how a message travelled.
type Transport int

// The transports.
const (
	UDP Transport = iota
	TCP
	TLS
)

var protocols = map[Transport]dnstap.SocketProtocol{UDP: dnstap.SocketProtocol_UDP, TCP: dnstap.SocketProtocol_TCP, TLS: dnstap.SocketProtocol_DOT}

// Client queues a CLIENT_QUERY and a CLIENT_RESPONSE: query came from
// client at qtime and was answered with resp at rtime.
func (t *Tap) Client(client net.Addr, tr Transport, query, resp []byte, qtime, rtime time.Time) {
	if t == nil {
		return
	}
	ap := addrPort(client)
	q := newMessage(dnstap.Message_CLIENT_QUERY, ap, tr)
	q.QueryAddress, q.QueryPort = ap.Addr().AsSlice(), ptr(uint32(ap.Port()))
	q.QueryMessage = query
	setQueryTime(q, qtime)
	r := newMessage(dnstap.Message_CLIENT_RESPONSE, ap, tr)
	r.QueryAddress, r.QueryPort = q.QueryAddress, q.QueryPort
	r.QueryMessage, r.ResponseMessage = query, resp
	setQueryTime(r, qtime)
	setResponseTime(r, rtime)
	t.enqueue(q)
	t.enqueue(r)
}

// Forwarder queues a FORWARDER_QUERY and, when resp is not nil, a
// FORWARDER_RESPONSE: query was sent to upstream at qtime and resp came
// back at rtime.
func (t *Tap) Forwarder(upstream netip.AddrPort, tr Transport, query, resp []byte, qtime, rtime time.Time) {
	if t == nil {
		return
	}
	q := newMessage(dnstap.Message_FORWARDER_QUERY, upstream, tr)
	q.ResponseAddress, q.ResponsePort = upstream.Addr().AsSlice(), ptr(uint32(upstream.Port()))
	q.QueryMessage = query
	setQueryTime(q, qtime)
	t.enqueue(q)
	if resp == nil {
		return
	}
	r := newMessage(dnstap.Message_FORWARDER_RESPONSE, upstream, tr)
	r.ResponseAddress, r.ResponsePort = q.ResponseAddress, q.ResponsePort
	r.QueryMessage, r.ResponseMessage = query, resp
	setQueryTime(r, qtime)
	setResponseTime(r, rtime)
	t.enqueue(r)
}

// FastAnswer is Client for an answer of the fast path, which keeps no
// query: the query is rebuilt from the answer's header and question. It
// has the fastpath.Config.LogAnswer signature: client's Network says
// the transport.
func (t *Tap) FastAnswer(client net.Addr, resp []byte, took time.Duration) {
	if t == nil {
		return
	}
	now := time.Now()
	t.Client(client, transportOf(client), QueryOf(resp), append([]byte(nil), resp...), now.Add(-took), now)
}

// transportOf is the transport client's Network names: "tcp", "tls",
// else UDP.
func transportOf(client net.Addr) Transport {
	if client == nil {
		return UDP
	}
	switch client.Network() {
	case "tcp":
		return TCP
	case "tls":
		return TLS
	}
	return UDP
}

func newMessage(typ dnstap.Message_Type, peer netip.AddrPort, tr Transport) *dnstap.Message {
	family := dnstap.SocketFamily_INET
	if peer.Addr().Is6() {
		family = dnstap.SocketFamily_INET6
	}
	proto := protocols[tr]
	return &dnstap.Message{Type: &typ, SocketFamily: &family, SocketProtocol: &proto}
}

func setQueryTime(m *dnstap.Message, at time.Time) {
	m.QueryTimeSec, m.QueryTimeNsec = ptr(uint64(at.Unix())), ptr(uint32(at.Nanosecond()))
}

func setResponseTime(m *dnstap.Message, at time.Time) {
	m.ResponseTimeSec, m.ResponseTimeNsec = ptr(uint64(at.Unix())), ptr(uint32(at.Nanosecond()))
}

// addrPort is a client's address and port, IPv4-mapped ones unmapped; the
// zero AddrPort for an address that has none.
func addrPort(a net.Addr) netip.AddrPort {
	if a, ok := a.(interface{ AddrPort() netip.AddrPort }); ok {
		ap := a.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	return netip.AddrPort{}
}

func ptr[T any](v T) *T { return &v }
