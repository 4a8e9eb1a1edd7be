package dnsserver

import (
	"context"
	"log/slog"
	"net"
	"net/netip"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/skydns/rrl"
)

// handler is the dns.Handler of both transports.
type handler struct {
	responder    Responder
	maxUDPSize   int
	queryTimeout time.Duration
	base         context.Context // canceled on shutdown
	observe      func(Exchange)
	panicked     func(path string, packet []byte, value any)
	logger       *slog.Logger
	udpSlots     udpSlots                                     // a UDP query gives its slot back when answered
	rrl          *rrl.Limiter                                 // nil: no response rate limiting
	transfer     func(q Query, w dns.ResponseWriter) *dns.Msg // nil: transfers reach the responder
	recursion    func(client netip.Addr) bool                 // Config.RecursionAvailable, never nil
}

func (h *handler) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	start := time.Now()
	proto := protocol(w)
	if proto == "udp" {
		defer h.udpSlots.give()
	}
	defer h.recoverQuery(w, req, proto)
	q := Query{Msg: req, Client: clientAddr(w), Proto: proto}
	var resp *dns.Msg
	switch {
	case req.IsTsig() != nil:
		resp = unknownKey(req, h.maxUDPSize)
	case h.transfer != nil && proto == "tcp" && isTransfer(req):
		if resp = h.transfer(q, w); resp == nil {
			return // streamed
		}
		Fit(resp, req, proto, h.maxUDPSize)
	default:
		ctx, cancel := context.WithTimeout(h.base, h.queryTimeout)
		resp = Reply(ctx, h.responder, q, h.maxUDPSize)
		cancel()
	}
	if h.rrl != nil && proto == "udp" {
		if resp = limited(h.rrl, resp, clientAddr(w)); resp == nil {
			return
		}
	}
	if err := w.WriteMsg(resp); err != nil {
		h.logger.Debug("writing DNS response", "proto", proto, "client", w.RemoteAddr().String(), "err", err)
	}
	h.observe(Exchange{Proto: proto, TLS: overTLS(w), Client: w.RemoteAddr(), Request: req, Response: resp, Duration: time.Since(start)})
}

// isTransfer reports whether req asks for a zone transfer.
func isTransfer(req *dns.Msg) bool {
	return len(req.Question) == 1 && (req.Question[0].Qtype == dns.TypeAXFR || req.Question[0].Qtype == dns.TypeIXFR)
}

// limited applies l to resp, the answer to client: resp, an empty
// truncated copy, or nil when nothing is to be sent.
func limited(l *rrl.Limiter, resp *dns.Msg, client netip.Addr) *dns.Msg {
	switch l.Decide(client) {
	case rrl.Drop:
		return nil
	case rrl.Slip:
		tc := resp.Copy()
		tc.Answer, tc.Ns, tc.Extra = nil, nil, nil
		if opt := resp.IsEdns0(); opt != nil {
			tc.Extra = []dns.RR{opt}
		}
		tc.Truncated = true
		return tc
	}
	return resp
}

// Reply is the response the server writes to q: the Responder's, addressed
// to q (BADVERS for an EDNS version other than 0, SERVFAIL when the
// Responder returns nil), with an OPT record advertising maxUDPSize when q
// has one, compressed, and truncated to what q's requester accepts over
// q.Proto.
func Reply(ctx context.Context, r Responder, q Query, maxUDPSize int) *dns.Msg {
	resp := respond(ctx, r, q)
	Fit(resp, q.Msg, q.Proto, maxUDPSize)
	return resp
}

// respond returns the answer to q before any transport adjustment. A
// message without exactly one question gets FORMERR: the Responder always
// has a question to read.
func respond(ctx context.Context, r Responder, q Query) *dns.Msg {
	req := q.Msg
	if len(req.Question) != 1 {
		return new(dns.Msg).SetRcode(req, dns.RcodeFormatError)
	}
	if opt := req.IsEdns0(); opt != nil && opt.Version() != 0 {
		return new(dns.Msg).SetRcode(req, dns.RcodeBadVers)
	}
	resp := r.Respond(ctx, q)
	if resp == nil {
		return new(dns.Msg).SetRcode(req, dns.RcodeServerFailure)
	}
	resp.Id = req.Id
	return resp
}

// Fit sets resp's OPT record and truncates it to what the transport and
// req's requester allow: the part of Reply the fast path also needs for
// the answers it caches. The OPT record has the DO bit when req's has and
// resp is signed (has an RRSIG). Compression is always on. The sections'
// slices may be shared with a cache, so they are copied before being
// changed.
func Fit(resp, req *dns.Msg, proto string, maxUDPSize int) {
	resp.Extra = withoutOPT(resp.Extra)
	reqOPT := req.IsEdns0()
	if reqOPT != nil {
		resp.SetEdns0(uint16(maxUDPSize), reqOPT.Do() && signed(resp))
	}
	resp.Truncate(responseSize(proto, reqOPT, maxUDPSize))
	resp.Compress = true
}

// signed reports whether resp has an RRSIG record.
func signed(resp *dns.Msg) bool {
	for _, section := range [][]dns.RR{resp.Answer, resp.Ns, resp.Extra} {
		for _, rr := range section {
			if rr.Header().Rrtype == dns.TypeRRSIG {
				return true
			}
		}
	}
	return false
}

// responseSize is the largest response the requester accepts: over UDP
// its EDNS0 buffer size, clamped to [512, maxUDPSize], or 512 without
// EDNS0; over TCP 64 KiB.
func responseSize(proto string, reqOPT *dns.OPT, maxUDPSize int) int {
	switch {
	case proto == "tcp":
		return dns.MaxMsgSize
	case reqOPT == nil:
		return dns.MinMsgSize
	}
	return min(max(int(reqOPT.UDPSize()), dns.MinMsgSize), maxUDPSize)
}

// withoutOPT returns a new slice of the records of extra that are not OPT,
// with room for one more.
func withoutOPT(extra []dns.RR) []dns.RR {
	kept := make([]dns.RR, 0, len(extra)+1)
	for _, rr := range extra {
		if _, isOPT := rr.(*dns.OPT); !isOPT {
			kept = append(kept, rr)
		}
	}
	return kept
}

// clientAddr is the requester's IP address (see IP).
func clientAddr(w dns.ResponseWriter) netip.Addr { return IP(w.RemoteAddr()) }

// IP is the IP address of a requester's address, IPv4-mapped ones
// unmapped: a *net.UDPAddr, a *net.TCPAddr or a *fastpath.Addr, which all
// have one; the zero Addr for anything else.
func IP(a net.Addr) netip.Addr {
	if a, ok := a.(interface{ AddrPort() netip.AddrPort }); ok {
		return a.AddrPort().Addr().Unmap()
	}
	return netip.Addr{}
}

// overTLS reports whether w's connection is DNS over TLS: it has a TLS
// connection state (dns.ConnectionStater).
func overTLS(w dns.ResponseWriter) bool {
	cs, ok := w.(dns.ConnectionStater)
	return ok && cs.ConnectionState() != nil
}

func protocol(w dns.ResponseWriter) string {
	if _, ok := w.LocalAddr().(*net.UDPAddr); ok {
		return "udp"
	}
	return "tcp"
}

// accept rejects what the Responder must never see: responses are ignored,
// opcodes other than QUERY get NOTIMP, and messages without exactly one
// question (or with too many records) get FORMERR.
func accept(h dns.Header) dns.MsgAcceptAction {
	const qrBit = 1 << 15
	if h.Bits&qrBit == 0 && int(h.Bits>>11)&0xF != dns.OpcodeQuery {
		return dns.MsgRejectNotImplemented
	}
	return dns.DefaultMsgAcceptFunc(h)
}
