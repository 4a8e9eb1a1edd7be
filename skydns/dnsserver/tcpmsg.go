package dnsserver

import (
	"crypto/tls"
	"encoding/binary"
	"errors"
	"net"

	"github.com/miekg/dns"
)

// errNoHeader is what Config.Invalid is told of a TCP message too short
// for a DNS header.
var errNoHeader = errors.New("dns: message shorter than a header")

// serveOrdinary answers one message read from a TCP connection the way
// miekg/dns's server does: no answer to a message without a header or to
// a response, NOTIMP or FORMERR to what accept rejects, FORMERR to what
// does not parse, and the handler's answer to the rest.
func (s *tcpServer) serveOrdinary(w dns.ResponseWriter, msg []byte) {
	if len(msg) < 12 {
		s.invalid(errNoHeader)
		return
	}
	h := dns.Header{Id: binary.BigEndian.Uint16(msg), Bits: binary.BigEndian.Uint16(msg[2:]),
		Qdcount: binary.BigEndian.Uint16(msg[4:]), Ancount: binary.BigEndian.Uint16(msg[6:]),
		Nscount: binary.BigEndian.Uint16(msg[8:]), Arcount: binary.BigEndian.Uint16(msg[10:])}
	req := new(dns.Msg)
	action := accept(h)
	switch action {
	case dns.MsgIgnore:
		return
	case dns.MsgAccept:
		err := req.Unpack(msg)
		if err == nil {
			s.h.ServeDNS(w, req)
			return
		}
		s.invalid(err)
	default:
		setHeader(req, h)
	}
	w.WriteMsg(rejection(req, action))
}

// rejection turns req, holding what was read of a rejected query, into
// the answer miekg/dns's server gives: FORMERR, or NOTIMP with the
// query's opcode, with its question if one was read and no records.
func rejection(req *dns.Msg, action dns.MsgAcceptAction) *dns.Msg {
	opcode := req.Opcode
	req.SetRcodeFormatError(req)
	req.Zero = false
	if action == dns.MsgRejectNotImplemented {
		req.Opcode = opcode
		req.Rcode = dns.RcodeNotImplemented
	}
	req.Ns, req.Answer, req.Extra = nil, nil, nil
	return req
}

// setHeader sets m's header fields from h, as unpacking would.
func setHeader(m *dns.Msg, h dns.Header) {
	const (
		qr = 1 << 15
		aa = 1 << 10
		tc = 1 << 9
		rd = 1 << 8
		ra = 1 << 7
		z  = 1 << 6
		ad = 1 << 5
		cd = 1 << 4
	)
	m.Id = h.Id
	m.Response = h.Bits&qr != 0
	m.Opcode = int(h.Bits>>11) & 0xF
	m.Authoritative = h.Bits&aa != 0
	m.Truncated = h.Bits&tc != 0
	m.RecursionDesired = h.Bits&rd != 0
	m.RecursionAvailable = h.Bits&ra != 0
	m.Zero = h.Bits&z != 0
	m.AuthenticatedData = h.Bits&ad != 0
	m.CheckingDisabled = h.Bits&cd != 0
	m.Rcode = int(h.Bits & 0xF)
}

// tcpWriter is the dns.ResponseWriter of one query of a tcpSession: it
// writes the framed answer among the session's other writes.
type tcpWriter struct{ s *tcpSession }

var (
	_ dns.ResponseWriter   = tcpWriter{}
	_ dns.ConnectionStater = tcpWriter{}
)

func (w tcpWriter) LocalAddr() net.Addr  { return w.s.conn.LocalAddr() }
func (w tcpWriter) RemoteAddr() net.Addr { return w.s.conn.RemoteAddr() }

func (w tcpWriter) WriteMsg(m *dns.Msg) error {
	wire, err := m.Pack()
	if err != nil {
		return err
	}
	_, err = w.Write(wire)
	return err
}

// Write writes one message, framed, an error answer with the flags
// errorFlags gives it.
func (w tcpWriter) Write(msg []byte) (int, error) {
	if len(msg) > dns.MaxMsgSize {
		return 0, dns.ErrBuf
	}
	if errorAnswer(msg) {
		msg = errorFlags(msg, w.s.srv.h.recursion(IP(w.RemoteAddr())))
	}
	framed := binary.BigEndian.AppendUint16(make([]byte, 0, 2+len(msg)), uint16(len(msg)))
	if err := w.s.write(append(framed, msg...)); err != nil {
		return 0, err
	}
	return len(msg), nil
}

// ConnectionState is the TLS state of a DNS over TLS connection, nil for
// plain TCP (dns.ConnectionStater).
func (w tcpWriter) ConnectionState() *tls.ConnectionState {
	if c, ok := w.s.conn.(*tls.Conn); ok {
		cs := c.ConnectionState()
		return &cs
	}
	return nil
}

// Close closes the connection: its session then ends.
func (w tcpWriter) Close() error        { return w.s.conn.Close() }
func (w tcpWriter) TsigStatus() error   { return nil }
func (w tcpWriter) TsigTimersOnly(bool) {}
func (w tcpWriter) Hijack()             {}
