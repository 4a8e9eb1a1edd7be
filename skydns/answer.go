package skydns

import (
	"context"
	"net/netip"

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

// answerer routes a query: names in the zones to the resolver over the
// newest snapshot, the rest to the forwarder.
type answerer struct {
	resolver  *resolver.Resolver
	mirror    *Mirror
	forwarder Forwarder
}

func (a *answerer) Answer(ctx context.Context, q dnsserver.Query) *dns.Msg {
	return a.answer(ctx, q, nil)
}

// answer is Answer telling visit (when not nil) every name whose records
// the resolver read (see resolver.ResolveVisiting).
func (a *answerer) answer(ctx context.Context, q dnsserver.Query, visit func(string)) *dns.Msg {
	if _, ok := a.resolver.Zone(q.Msg.Question[0].Name); !ok {
		return a.forwarder.Forward(ctx, q)
	}
	snap := a.mirror.Snapshot()
	if snap.Revision() == 0 {
		// Not listed yet: an empty snapshot would deny names that exist,
		// and resolvers cache denials. SERVFAIL makes clients retry.
		return new(dns.Msg).SetRcode(q.Msg, dns.RcodeServerFailure)
	}
	return a.chase(ctx, q, a.resolver.ResolveVisiting(snap, q.Msg, visit))
}

// chase completes resp when its CNAME chain leaves the zones, the
// forwarder can chase, and the client may have names resolved for it.
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
	resp.Answer = append(resp.Answer, rrs...)
	resp.Rcode = rcode
	resp.RecursionAvailable = true
	return resp
}
