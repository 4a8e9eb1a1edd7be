package forward

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/skydns/tap"
)

// udpSize is the EDNS buffer size announced upstream and to clients, the
// size that avoids IP fragmentation (DNS Flag Day 2020).
const udpSize = 1232

// The results of one attempt at one upstream, the values of the result label.
const (
	resultOK        = "ok"            // an answer to use
	resultRcode     = "rcode_failure" // SERVFAIL, REFUSED, NOTIMP or FORMERR
	resultTimeout   = "timeout"       // no reply in time
	resultError     = "error"         // the network said no
	resultMalformed = "malformed"     // a reply that does not parse or does not match
	resultOverLimit = "over_limit"    // not sent: --forward-max-concurrent queries in flight
)

// errMismatch is a reply over TCP or TLS that does not answer the query.
var errMismatch = errors.New("reply does not match the query")

// exchange sends base to addr over UDP, and again over TCP when the reply
// is truncated. Each query gets a random ID, the upstream's cookie and, when
// the upstream keeps case, the name in random case (see prepare); a
// reply must match them all. A DNS over TLS upstream is asked over its
// verified connection instead. It returns the reply and the attempt's
// result.
func (f *Forwarder) exchange(ctx context.Context, addr string, base *dns.Msg) (*dns.Msg, string, error) {
	if p := f.dot.pool(addr); p != nil {
		q := base.Copy()
		q.Id = dns.Id()
		return f.exchangeTLS(ctx, p, q)
	}
	r, err := f.exchangeOnce(ctx, addr, base)
	if err != nil {
		return nil, classify(err), err
	}
	if failedRcode(r.Rcode) {
		return r, resultRcode, nil
	}
	return r, resultOK, nil
}

// exchangeOnce asks addr for base over UDP, then over TCP if the reply is
// truncated (over TCP only with forceTCP), and returns the reply with the
// name in base's case.
func (f *Forwarder) exchangeOnce(ctx context.Context, addr string, base *dns.Msg) (*dns.Msg, error) {
	p := f.peers.get(addr)
	var r, q *dns.Msg
	var err error
	if f.forceTCP {
		q = prepare(base, p, false, f.now())
		r, err = f.askTCP(ctx, addr, q, p)
	} else if r, q, err = f.askUDP(ctx, addr, base, p); err == nil && r.Truncated {
		f.metrics.tcpRetries.Inc()
		r, err = f.askTCP(ctx, addr, q, p)
	}
	if err != nil {
		return nil, err
	}
	plainCase(r, q.Question[0].Name, base.Question[0].Name)
	return r, nil
}

// askUDP sends base prepared for p to addr and returns the reply and the
// query sent. An upstream that changes the case of the name is asked again
// at once with the name as it is, and gets such names for caseHold.
func (f *Forwarder) askUDP(ctx context.Context, addr string, base *dns.Msg, p *peer) (*dns.Msg, *dns.Msg, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return nil, nil, err
	}
	now := f.now()
	q := prepare(base, p, p.mixCase(now), now)
	r, err := f.tappedUDP(ctx, ap, q, p)
	if errors.Is(err, errCaseChanged) {
		p.caseLost(f.now())
		f.logger.Info("upstream does not keep the case of query names; sending it plain ones", "upstream", addr)
		q = prepare(base, p, false, f.now())
		r, err = f.tappedUDP(ctx, ap, q, p)
	}
	return r, q, err
}

// tappedUDP is exchangeUDP, with the query and its reply sent to dnstap.
func (f *Forwarder) tappedUDP(ctx context.Context, ap netip.AddrPort, q *dns.Msg, p *peer) (*dns.Msg, error) {
	start := time.Now()
	r, err := f.exchangeUDP(ctx, ap, q, p)
	f.tapExchange(ap.String(), tap.UDP, q, r, start)
	return r, err
}

// askTCP sends q to addr over TCP; the reply must answer q as over UDP.
func (f *Forwarder) askTCP(ctx context.Context, addr string, q *dns.Msg, p *peer) (*dns.Msg, error) {
	start := time.Now()
	r, _, err := f.tcp.ExchangeContext(ctx, q, addr)
	f.tapExchange(addr, tap.TCP, q, r, start)
	if err != nil {
		return nil, err
	}
	if verify(q, r, p) != "" || r.Truncated {
		return nil, errMismatch
	}
	return r, nil
}

// checkReply makes sure r, over DNS over TLS, answers q: a response to
// the same question, whole.
func checkReply(q, r *dns.Msg) error {
	if r.Truncated || answersQuestion(q, r) != "" {
		return errMismatch
	}
	return nil
}

// failedRcode reports whether an upstream's rcode means it could not
// answer, so another upstream should be asked: every rcode but NOERROR,
// NXDOMAIN and YXDOMAIN (a DNAME's result too long, RFC 6672), the only
// ones that answer a query. Extended rcodes (BADVERS...) count as
// failures: the query carries plain EDNS version 0.
func failedRcode(rcode int) bool {
	switch rcode {
	case dns.RcodeSuccess, dns.RcodeNameError, dns.RcodeYXDomain:
		return false
	}
	return true
}

func classify(err error) string {
	var netErr net.Error
	var dnsErr *dns.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return resultTimeout
	case errors.Is(err, errMismatch), errors.As(err, &dnsErr):
		return resultMalformed
	}
	return resultError
}
