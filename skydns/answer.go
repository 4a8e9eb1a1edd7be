package skydns

import (
	"context"
	"net/netip"
	"sync/atomic"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/skydns/dnsserver"
	"github.com/kubesky/kubesky/skydns/resolver"
	"github.com/kubesky/kubesky/skydns/snapshot"
)

// Forwarder answers the queries for names outside the served zones. It is
// the one place forwarding plugs into the daemon (Config.Forwarder). The
// response must be addressed to q.Msg; the server sets EDNS and truncates.
type Forwarder interface {
	Forward(ctx context.Context, q dnsserver.Query) *dns.Msg
}

// Refuse is the Forwarder used when none is configured: every name
// outside the zones gets REFUSED, an answer rather than a timeout.
var Refuse Forwarder = refuse{}

type refuse struct{}

func (refuse) Forward(_ context.Context, q dnsserver.Query) *dns.Msg {
	return new(dns.Msg).SetRcode(q.Msg, dns.RcodeRefused)
}

// Chaser is what a Forwarder may also do: complete an answer from the
// zones whose CNAME chain ends outside them (an ExternalName service).
// Chase returns the target's records and the rcode to answer with.
type Chaser interface {
	RecursionAllowed(client netip.Addr) bool
	Chase(ctx context.Context, target string, qtype uint16) ([]dns.RR, int)
}

// StubSetter is what a Forwarder may also do: take its stub domains from
// the dns/stub records of every published snapshot.
type StubSetter interface {
	SetStubsFrom(snap *snapshot.Snapshot, zones []string)
}

// LiveSetter is what a Forwarder may also do: take its upstreams, ACL and
// cache settings from the dns/config records of the first zone in every
// published snapshot.
type LiveSetter interface {
	SetLiveFrom(snap *snapshot.Snapshot, zone string)
}

// answerer routes a query: names in the zones to the resolver over the
// newest snapshot, the rest to the forwarder.
type answerer struct {
	resolver  *resolver.Resolver
	mirror    *Mirror
	forwarder Forwarder
	// panicked reports a panic of the forwarder (see dnsserver.Config).
	panicked func(path string, packet []byte, value any)
	// rotate turns A, AAAA and SRV RRsets by one record per answer
	// (resolver.Rotate); turns counts the answers so far.
	rotate bool
	turns  atomic.Uint64
	// autopath answers a pod's first search-path query with the answer
	// its search path would reach (see searchPath).
	autopath bool
}

func (a *answerer) Answer(ctx context.Context, q dnsserver.Query) *dns.Msg {
	resp := a.answer(ctx, q, nil)
	if _, inZone := a.resolver.Zone(q.Msg.Question[0].Name); !inZone || resp == nil {
		return resp // the forwarder's: its records may be its cache's
	}
	if a.autopath && resp.Rcode == dns.RcodeNameError {
		resp = a.searchPath(ctx, q, resp)
	}
	if a.rotate && len(resp.Answer) > 1 {
		resolver.Rotate(resp, uint(a.turns.Add(1)))
	}
	return resp
}

// answer is Answer telling visit (when not nil) every name whose records
// the resolver read (see resolver.ResolveVisiting).
func (a *answerer) answer(ctx context.Context, q dnsserver.Query, visit func(string)) *dns.Msg {
	if q.Msg.Question[0].Qclass == dns.ClassCHAOS { // the server's identity, or REFUSED
		return a.resolver.Resolve(a.mirror.Snapshot(), q.Msg)
	}
	if _, ok := a.resolver.Zone(q.Msg.Question[0].Name); !ok {
		return a.forward(ctx, q)
	}
	snap := a.mirror.Snapshot()
	if snap.Revision() == 0 {
		// Not listed yet: an empty snapshot would deny names that exist,
		// and resolvers cache denials. SERVFAIL makes clients retry.
		return new(dns.Msg).SetRcode(q.Msg, dns.RcodeServerFailure)
	}
	return a.chase(ctx, q, a.resolver.ResolveVisiting(snap, q.Msg, visit))
}

// searchPath answers a pod's first search-path query, whose answer resp
// is NXDOMAIN, as the rest of the pod's search path would
// (resolver.SearchPath): with the first answer that is not NXDOMAIN,
// behind a CNAME from the name asked. An answer that is neither NOERROR
// nor NXDOMAIN (REFUSED for a client that may not recurse, SERVFAIL) ends
// the search, and resp answers.
func (a *answerer) searchPath(ctx context.Context, q dnsserver.Query, resp *dns.Msg) *dns.Msg {
	names, ok := a.resolver.SearchPath(a.mirror.Snapshot(), q.Msg.Question[0].Name, q.Client)
	if !ok {
		return resp
	}
	for _, name := range names {
		step := q
		step.Msg = q.Msg.Copy()
		step.Msg.Question[0].Name = name
		switch answer := a.answer(ctx, step, nil); {
		case answer == nil || (answer.Rcode != dns.RcodeSuccess && answer.Rcode != dns.RcodeNameError):
			return resp
		case answer.Rcode == dns.RcodeSuccess:
			return a.resolver.Autopath(q.Msg, answer)
		}
	}
	return resp
}

// forward is the forwarder's answer to q, or nil (SERVFAIL) when the
// forwarder panicked: the panic is reported and the query's goroutine
// goes on.
func (a *answerer) forward(ctx context.Context, q dnsserver.Query) (resp *dns.Msg) {
	defer func() {
		if v := recover(); v != nil {
			a.panicked("forward", dnsserver.PackForLog(q.Msg), v)
			resp = nil
		}
	}()
	return a.forwarder.Forward(ctx, q)
}

// chase completes resp when its CNAME chain leaves the zones, the
// forwarder can chase, and the client may have names resolved for it.
// The rcode describes the question's name, which exists: a chase that
// fails (NXDOMAIN, SERVFAIL, any other rcode) adds nothing, and the answer
// is the zone's CNAME chain with NOERROR.
func (a *answerer) chase(ctx context.Context, q dnsserver.Query, resp *dns.Msg) *dns.Msg {
	chaser, ok := a.forwarder.(Chaser)
	if !ok || !q.Msg.RecursionDesired || !chaser.RecursionAllowed(q.Client) {
		return resp
	}
	target, ok := a.resolver.ExternalTarget(resp)
	if !ok {
		return resp
	}
	rrs, rcode := chaser.Chase(ctx, target, q.Msg.Question[0].Qtype)
	if rcode == dns.RcodeSuccess {
		resp.Answer = append(resp.Answer, rrs...)
	}
	resp.RecursionAvailable = true
	return resp
}
