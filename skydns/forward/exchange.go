package forward

import (
	"context"
	"errors"
	"net"
	"strings"
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

// errMismatch is a reply whose header or question does not match the query.
var errMismatch = errors.New("reply does not match the query")

// exchange sends q to addr over UDP, and again over TCP when the reply is
// truncated. It returns the reply and the attempt's result.
func (f *Forwarder) exchange(ctx context.Context, addr string, q *dns.Msg) (*dns.Msg, string, error) {
	q.Id = dns.Id()
	if p := f.dot.pool(addr); p != nil {
		return f.exchangeTLS(ctx, p, q)
	}
	start, tr := time.Now(), tap.UDP
	r, _, err := f.udp.ExchangeContext(ctx, q, addr)
	if err == nil && r.Truncated {
		f.metrics.tcpRetries.Inc()
		start, tr = time.Now(), tap.TCP
		r, _, err = f.tcp.ExchangeContext(ctx, q, addr)
	}
	f.tapExchange(addr, tr, q, r, start)
	if err == nil {
		err = checkReply(q, r)
	}
	if err != nil {
		return nil, classify(err), err
	}
	if failedRcode(r.Rcode) {
		return r, resultRcode, nil
	}
	return r, resultOK, nil
}

// checkReply makes sure r answers q: a response to the same question, whole.
func checkReply(q, r *dns.Msg) error {
	if !r.Response || r.Opcode != dns.OpcodeQuery || r.Truncated {
		return errMismatch
	}
	if len(r.Question) == 0 && failedRcode(r.Rcode) {
		return nil // some servers drop the question from errors
	}
	if len(r.Question) != 1 {
		return errMismatch
	}
	got, want := r.Question[0], q.Question[0]
	if got.Qtype != want.Qtype || got.Qclass != want.Qclass || !strings.EqualFold(got.Name, want.Name) {
		return errMismatch
	}
	return nil
}

// failedRcode reports whether an upstream's rcode means it could not
// answer, so another upstream should be asked. Extended rcodes (BADVERS...)
// count as failures: the query carries plain EDNS version 0.
func failedRcode(rcode int) bool {
	switch rcode {
	case dns.RcodeServerFailure, dns.RcodeRefused, dns.RcodeNotImplemented, dns.RcodeFormatError:
		return true
	}
	return rcode > 0xF
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
