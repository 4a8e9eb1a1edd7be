package transfer

import (
	"log/slog"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/skydns/dnsserver"
	"github.com/kubesky/kubesky/skydns/resolver"
	"github.com/kubesky/kubesky/skydns/snapshot"
)

// envelopeSize bounds the records' uncompressed size in one message of a
// transfer, well under the 64 KiB a TCP message may hold.
const envelopeSize = 16 << 10

// The results Server.Observe is told.
const (
	ResultTransferred = "transferred" // the zone was written
	ResultFailed      = "failed"      // writing the zone failed
	ResultUpToDate    = "up_to_date"  // an IXFR from the current serial: the SOA alone
	ResultRefused     = "refused"     // over UDP, or a client the ACL does not allow
	ResultNotAuth     = "not_auth"    // not a zone's apex
	ResultNotSynced   = "not_synced"  // before the first snapshot
)

// Results are the results Server.Observe is told, for metrics.
var Results = []string{ResultTransferred, ResultFailed, ResultUpToDate, ResultRefused, ResultNotAuth, ResultNotSynced}

// Server answers zone transfer requests from the newest snapshot.
type Server struct {
	Resolver *resolver.Resolver
	Snapshot func() *snapshot.Snapshot // the newest snapshot
	ACL      ACL
	Logger   *slog.Logger
	// Observe, if set, is told the result of every request.
	Observe func(result string)

	builds builds
}

// Transfer answers q, an AXFR or IXFR request, writing the zone to w over
// several messages when the client may have it. It returns the message to
// answer with when it did not stream: REFUSED over UDP or to a client the
// ACL does not allow, NOTAUTH for a name that is not a zone's apex,
// SERVFAIL before the first snapshot, and for an IXFR whose serial is
// current, the SOA alone. It returns nil when it streamed.
func (s *Server) Transfer(q dnsserver.Query, w dns.ResponseWriter) *dns.Msg {
	resp, result := s.transfer(q, w)
	if s.Observe != nil {
		s.Observe(result)
	}
	return resp
}

func (s *Server) transfer(q dnsserver.Query, w dns.ResponseWriter) (*dns.Msg, string) {
	req := q.Msg
	if q.Proto != "tcp" || !s.ACL.Allows(q.Client) {
		return reply(req, dns.RcodeRefused), ResultRefused
	}
	snap := s.Snapshot()
	if snap.Revision() == 0 {
		return reply(req, dns.RcodeServerFailure), ResultNotSynced
	}
	zone := dns.CanonicalName(req.Question[0].Name)
	soa, ok := SOA(s.Resolver, snap, zone)
	switch {
	case !ok:
		return reply(req, dns.RcodeNotAuth), ResultNotAuth
	case req.Question[0].Qtype == dns.TypeIXFR && current(req, soa.Serial):
		resp := reply(req, dns.RcodeSuccess)
		resp.Answer = []dns.RR{soa}
		return resp, ResultUpToDate
	}
	if err := s.stream(w, req, zone, snap); err != nil {
		return nil, ResultFailed
	}
	return nil, ResultTransferred
}

// stream writes zone's records to w.
func (s *Server) stream(w dns.ResponseWriter, req *dns.Msg, zone string, snap *snapshot.Snapshot) error {
	start := time.Now()
	rrs := s.builds.records(s.Resolver, snap, zone)
	envelopes := Envelopes(rrs)
	ch := make(chan *dns.Envelope, len(envelopes))
	for _, e := range envelopes {
		ch <- e
	}
	close(ch)
	err := new(dns.Transfer).Out(w, req, ch)
	s.Logger.Info("zone transferred", "zone", zone, "type", dns.TypeToString[req.Question[0].Qtype],
		"client", w.RemoteAddr().String(), "serial", uint32(snap.Revision()), "records", len(rrs),
		"messages", len(envelopes), "took", time.Since(start), "err", err)
	return err
}

// Envelopes cuts rrs into messages of at most envelopeSize bytes of
// records each (one record larger than that goes alone).
func Envelopes(rrs []dns.RR) []*dns.Envelope {
	var out []*dns.Envelope
	size := 0
	for _, rr := range rrs {
		n := dns.Len(rr)
		if len(out) == 0 || size+n > envelopeSize {
			out = append(out, &dns.Envelope{})
			size = 0
		}
		last := out[len(out)-1]
		last.RR = append(last.RR, rr)
		size += n
	}
	return out
}

// current reports whether an IXFR request's serial (the SOA in its
// authority section) is the serial given or newer, in RFC 1982 serial
// arithmetic. A request without one is not current.
func current(req *dns.Msg, serial uint32) bool {
	for _, rr := range req.Ns {
		if soa, ok := rr.(*dns.SOA); ok {
			return soa.Serial == serial || soa.Serial-serial < 1<<31
		}
	}
	return false
}

func reply(req *dns.Msg, rcode int) *dns.Msg {
	resp := new(dns.Msg).SetRcode(req, rcode)
	resp.Authoritative = rcode == dns.RcodeSuccess
	return resp
}
