package forward

import (
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// The reasons a datagram read on a forwarding socket is ignored, the values
// of the reason label of the ignored-replies counter.
const (
	ignoredSource    = "source"    // not from the upstream's address and port
	ignoredID        = "id"        // another query ID
	ignoredMalformed = "malformed" // does not parse, or is not a response to a query
	ignoredQuestion  = "question"  // another name, type or class, or no question
	ignoredCase      = "case"      // the name's case changed (0x20)
	ignoredCookie    = "cookie"    // a client cookie that is not ours
	ignoredNoCookie  = "no_cookie" // no cookie from an upstream that sends them
)

// errCaseChanged means the upstream answered with the query name's case
// changed: it does not keep case, and 0x20 cannot be used with it.
var errCaseChanged = errors.New("upstream changed the case of the query name")

// prepare returns the copy of base to send to p's upstream: a random ID,
// our COOKIE option, and, when mixed, the name in random case.
func prepare(base *dns.Msg, p *peer, mixed bool, now time.Time) *dns.Msg {
	q := base.Copy()
	q.Id = uint16(rand.Uint32()) // math/rand/v2: ChaCha8, seeded by the runtime
	if mixed {
		q.Question[0].Name = randomCase(q.Question[0].Name)
	}
	if opt := q.IsEdns0(); opt != nil {
		opt.Option = append(opt.Option, p.cookie(now))
	}
	return q
}

// plainCase gives the records of r owned by the name as sent, in random
// case, the name as asked, so the cache holds one spelling.
func plainCase(r *dns.Msg, sent, asked string) {
	for _, section := range [][]dns.RR{r.Answer, r.Ns, r.Extra} {
		for _, rr := range section {
			if h := rr.Header(); h.Name == sent {
				h.Name = asked
			}
		}
	}
}

// randomCase returns name with the case of every ASCII letter chosen at
// random (draft-vixie-dnsext-dns0x20).
func randomCase(name string) string {
	b := []byte(name)
	var bits uint64
	used := 64
	for i, c := range b {
		if (c|0x20) < 'a' || (c|0x20) > 'z' {
			continue
		}
		if used == 64 {
			bits, used = rand.Uint64(), 0
		}
		if bits>>used&1 == 1 {
			b[i] = c ^ 0x20
		}
		used++
	}
	return string(b)
}

// exchangeUDP sends q to addr from a socket of its own, bound to a port the
// kernel picks at random, and returns the first datagram that answers q
// (see match). Every other datagram is counted and ignored and the read
// goes on until ctx ends, so a forged or broken one cannot take the place
// of the real answer.
func (f *Forwarder) exchangeUDP(ctx context.Context, addr netip.AddrPort, q *dns.Msg, p *peer) (*dns.Msg, error) {
	packed, err := q.Pack()
	if err != nil {
		return nil, err
	}
	conn, err := net.ListenUDP(network(addr), nil)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if d, ok := ctx.Deadline(); ok {
		_ = conn.SetReadDeadline(d)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := conn.WriteToUDPAddrPort(packed, addr); err != nil {
		return nil, err
	}
	return f.readReply(conn, addr, q, p)
}

func network(addr netip.AddrPort) string {
	if addr.Addr().Is4() {
		return "udp4"
	}
	return "udp6"
}

// readBuffers are the buffers replies are read into: as large as a
// datagram can be, so no reply is cut short whatever size it is.
var readBuffers = sync.Pool{New: func() any { return new([dns.MaxMsgSize]byte) }}

// readReply reads conn until a datagram answers q or the deadline passes.
func (f *Forwarder) readReply(conn *net.UDPConn, addr netip.AddrPort, q *dns.Msg, p *peer) (*dns.Msg, error) {
	array := readBuffers.Get().(*[dns.MaxMsgSize]byte)
	defer readBuffers.Put(array)
	buf := array[:]
	missedCookie := false
	for {
		n, from, err := conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			if missedCookie {
				p.forgetServerCookie()
			}
			return nil, err
		}
		r, why := match(q, addr, from, buf[:n], p)
		if why == "" {
			return r, nil
		}
		f.metrics.ignored.WithLabelValues(why).Inc()
		switch why {
		case ignoredCase:
			if q.Question[0].Name != strings.ToLower(q.Question[0].Name) {
				return nil, errCaseChanged // asked in mixed case
			}
		case ignoredNoCookie:
			missedCookie = true
		}
	}
}

// match parses packet, a datagram from from, and says why it does not
// answer q, sent to addr ("" when it does).
func match(q *dns.Msg, addr, from netip.AddrPort, packet []byte, p *peer) (*dns.Msg, string) {
	if from.Addr().Unmap() != addr.Addr() || from.Port() != addr.Port() {
		return nil, ignoredSource
	}
	if len(packet) < 2 || binary.BigEndian.Uint16(packet) != q.Id {
		return nil, ignoredID
	}
	r := new(dns.Msg)
	if err := r.Unpack(packet); err != nil {
		return nil, ignoredMalformed
	}
	return r, verify(q, r, p)
}

// verify says why r does not answer q ("" when it does): it must be a
// response to the same question, with the name in the same case, and carry
// our cookie when the upstream does cookies. A reply without a question is
// not taken even for an error: forged, it would make the real answer
// be dropped.
func verify(q, r *dns.Msg, p *peer) string {
	if why := answersQuestion(q, r); why != "" {
		return why
	}
	if why := p.checkCookie(r); why != "" {
		return why
	}
	if r.Question[0].Name != q.Question[0].Name {
		return ignoredCase
	}
	return ""
}

// answersQuestion says why r is not a response to q's question, in any
// case ("" when it is).
func answersQuestion(q, r *dns.Msg) string {
	if !r.Response || r.Opcode != dns.OpcodeQuery {
		return ignoredMalformed
	}
	if len(r.Question) != 1 {
		return ignoredQuestion
	}
	got, want := r.Question[0], q.Question[0]
	if got.Qtype != want.Qtype || got.Qclass != want.Qclass || !strings.EqualFold(got.Name, want.Name) {
		return ignoredQuestion
	}
	return ""
}
