package skydns

import (
	"context"
	"net/netip"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/skydns/dnsserver"
	"github.com/kubesky/kubesky/skydns/forward"
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

// ExternalResolver is what a Forwarder may also do: resolve the name
// outside the zones that a CNAME chain from the zones ends on (an
// ExternalName service), to complete the answer. ResolveExternal returns
// the target's records and the rcode to answer with.
type ExternalResolver interface {
	RecursionAllowed(client netip.Addr) bool
	ResolveExternal(ctx context.Context, target string, qtype uint16) ([]dns.RR, int)
}

// CacheLender is what a Forwarder may also do: lend its cache's replies
// to the fast path (forward.Forwarder.CachedReply), which serves them to
// the clients RecursionAllowed allows while Generation stays the same.
type CacheLender interface {
	RecursionAllowed(client netip.Addr) bool
	CachedReply(req *dns.Msg) (forward.Cached, bool)
	Generation() uint64
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

// LoopChecker is what a Forwarder may also do: check its upstreams for a
// forwarding loop once the server answers (CheckLoops), and say through
// which it found one (LoopErr; nil when none), the forwarder's readiness.
type LoopChecker interface {
	CheckLoops()
	LoopErr() error
}
