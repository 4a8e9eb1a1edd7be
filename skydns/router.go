package skydns

import (
	"context"
	"net/netip"
	"sync/atomic"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/skydns/clusterset"
	"github.com/kubesky/kubesky/skydns/dnssec"
	"github.com/kubesky/kubesky/skydns/dnsserver"
	"github.com/kubesky/kubesky/skydns/resolver"
	"github.com/kubesky/kubesky/skydns/rewrite"
	"github.com/kubesky/kubesky/skydns/snapshot"
	"github.com/kubesky/kubesky/skydns/template"
)

// router is the ordinary path's Responder: it sends a query for a name in
// the zones to the resolver over the newest snapshot and the rest to the
// forwarder, and finishes the zones' answers (the external target of a
// CNAME chain, autopath, rotation).
type router struct {
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
	// passOn sends the names of some zones that the zones deny to
	// the forwarder (see fallsThrough).
	passOn fallthroughRule
	// signer, if set, signs the answers of its zones (see signAnswer);
	// names tells it what exists.
	signer *dnssec.Signer
	names  *zoneNames
	// rewrites change the question's name first (package rewrite).
	rewrites rewrite.Rules
	// templates answer the questions they match next (package template).
	templates *template.Set
	// clusterset answers clusterset.local; nil when not configured.
	clusterset *clustersetZone
}

var _ dnsserver.Responder = (*router)(nil)

// Respond answers q, after the rewrite rules change its name (and then
// the answer back), as respond does.
func (r *router) Respond(ctx context.Context, q dnsserver.Query) *dns.Msg {
	w, err := r.rewrites.Apply(q.Msg)
	switch {
	case err != nil:
		return new(dns.Msg).SetRcode(q.Msg, dns.RcodeServerFailure)
	case w == nil:
		return r.respond(ctx, q)
	}
	rewritten := q
	rewritten.Msg = w.Query
	return w.Answer(r.respond(ctx, rewritten))
}

// respond answers q from the templates or else (see route); an answer from the zones then follows a
// pod's search path and is rotated, as configured.
func (r *router) respond(ctx context.Context, q dnsserver.Query) *dns.Msg {
	if m := r.templates.Answer(q.Msg, q.Client); m != nil {
		return m
	}
	if r.clusterset != nil && clusterset.InZone(q.Msg.Question[0].Name) {
		return r.clusterset.answer(q.Msg)
	}
	snap := r.mirror.Snapshot()
	resp, inZone := r.route(ctx, q, snap)
	if !inZone {
		return resp // the forwarder's: its records may be its cache's
	}
	if r.autopath && resp.Rcode == dns.RcodeNameError {
		resp = r.searchPath(ctx, q, resp, snap)
	}
	if r.rotate && len(resp.Answer) > 1 {
		resolver.Rotate(resp, uint(r.turns.Add(1)))
	}
	if r.signer != nil && snap.Revision() != 0 {
		zone, _ := r.resolver.Match(q.Msg.Question[0].Name)
		signAnswer(r.signer, r.names, resp, q.Msg, snap, zone, nil)
	}
	return resp
}

// route answers q from the zones when its name is in them (inZone), and
// from the forwarder otherwise. Class CH questions are the resolver's:
// the server's identity, or REFUSED.
func (r *router) route(ctx context.Context, q dnsserver.Query, snap *snapshot.Snapshot) (resp *dns.Msg, inZone bool) {
	question := q.Msg.Question[0]
	if question.Qclass == dns.ClassCHAOS {
		return r.resolver.Resolve(snap, q.Msg), false
	}
	zone, inZone := r.resolver.Match(question.Name)
	if !inZone {
		return r.forward(ctx, q), false
	}
	resp = r.resolveIn(ctx, q, zone, snap)
	if r.fallsThrough(zone, resp, q) {
		return r.forward(ctx, q), false
	}
	return resp, true
}

// recursionAvailable reports whether client may have names outside the
// zones resolved: the forwarder is an ExternalResolver that allows it.
func (r *router) recursionAvailable(client netip.Addr) bool {
	ext, ok := r.forwarder.(ExternalResolver)
	return ok && ext.RecursionAllowed(client)
}

// fallsThrough is true when resp, the zones' answer to q, denies a name
// that the forwarder may resolve for this client: a reverse name whose
// address is outside what kube2sky writes (8.8.8.8, a node's), which the
// upstreams know, as with kube-dns and CoreDNS's default Corefile; or a
// name of a zone --zone-fallthrough lists.
func (r *router) fallsThrough(zone resolver.ZoneMatch, resp *dns.Msg, q dnsserver.Query) bool {
	if !r.passOn.passesOn(zone) || resp.Rcode != dns.RcodeNameError || !q.Msg.RecursionDesired {
		return false
	}
	return r.recursionAvailable(q.Client)
}

// resolveIn answers q, whose name is in zone, from snap, the newest
// snapshot, and completes the answer when its CNAME chain leaves the zones.
func (r *router) resolveIn(ctx context.Context, q dnsserver.Query, zone resolver.ZoneMatch, snap *snapshot.Snapshot) *dns.Msg {
	if snap.Revision() == 0 {
		// Not listed yet: an empty snapshot would deny names that exist,
		// and resolvers cache denials. SERVFAIL makes clients retry.
		return new(dns.Msg).SetRcode(q.Msg, dns.RcodeServerFailure)
	}
	resp, external := r.resolver.ResolveIn(snap, zone, q.Msg, nil)
	if external != "" {
		r.completeExternal(ctx, q, resp, external)
	}
	return resp
}

// searchPath answers a pod's first search-path query, whose answer resp
// is NXDOMAIN, as the rest of the pod's search path would
// (resolver.SearchPath): with the first answer that is not NXDOMAIN,
// behind a CNAME from the name asked. An answer that is neither NOERROR
// nor NXDOMAIN (REFUSED for a client that may not recurse, SERVFAIL) ends
// the search, and resp answers.
func (r *router) searchPath(ctx context.Context, q dnsserver.Query, resp *dns.Msg, snap *snapshot.Snapshot) *dns.Msg {
	names, ok := r.resolver.SearchPath(snap, q.Msg.Question[0].Name, q.Client)
	if !ok {
		return resp
	}
	for _, name := range names {
		step := q
		step.Msg = q.Msg.Copy()
		step.Msg.Question[0].Name = name
		switch answer, _ := r.route(ctx, step, snap); {
		case answer == nil || (answer.Rcode != dns.RcodeSuccess && answer.Rcode != dns.RcodeNameError):
			return resp
		case answer.Rcode == dns.RcodeSuccess:
			return r.resolver.Autopath(q.Msg, answer)
		}
	}
	return resp
}

// forward is the forwarder's answer to q, or nil (SERVFAIL) when the
// forwarder panicked: the panic is reported and the query's goroutine
// goes on.
func (r *router) forward(ctx context.Context, q dnsserver.Query) (resp *dns.Msg) {
	defer func() {
		if v := recover(); v != nil {
			r.panicked("forward", dnsserver.PackForLog(q.Msg), v)
			resp = nil
		}
	}()
	return r.forwarder.Forward(ctx, q)
}

// completeExternal appends to resp the records of target, the name outside
// the zones its CNAME chain ends on, when the forwarder is an
// ExternalResolver and the client may have names resolved for it. The
// rcode describes the question's name, which exists: a target that does
// not resolve (NXDOMAIN, SERVFAIL, any other rcode) adds nothing, and the
// answer is the zone's CNAME chain with NOERROR.
func (r *router) completeExternal(ctx context.Context, q dnsserver.Query, resp *dns.Msg, target string) {
	ext, ok := r.forwarder.(ExternalResolver)
	if !ok || !q.Msg.RecursionDesired || !ext.RecursionAllowed(q.Client) {
		return
	}
	rrs, rcode := ext.ResolveExternal(ctx, target, q.Msg.Question[0].Qtype)
	if rcode == dns.RcodeSuccess {
		resp.Answer = append(resp.Answer, rrs...)
	}
	resp.RecursionAvailable = true
}
