package skydns

import (
	"context"
	"strings"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/skydns/dnsserver"
	"github.com/kubesky/kubesky/skydns/fastpath"
	"github.com/kubesky/kubesky/skydns/snapshot"
)

// wireAnswers gives the fast path the ordinary path's answers, packed:
// what the DNS server writes to a plain query for a name in the zones.
// Names outside the zones (the forwarder's), the time before the first
// list (SERVFAIL), answers whose CNAME chain leaves the zones (the
// forwarder may chase them, depending on the client and its RD bit) and,
// with autopath, NXDOMAIN for names a pod's search path makes stay on the
// ordinary path.
type wireAnswers struct {
	answerer   *answerer
	maxUDPSize int
}

var _ fastpath.Answers = (*wireAnswers)(nil)

// Version is the revision of the snapshot being served: a new snapshot
// has a new revision, and one revision always holds the same records.
func (w *wireAnswers) Version() uint64 {
	return uint64(w.answerer.mirror.Snapshot().Revision())
}

// Answer runs the ordinary path (answerer, EDNS, truncation) for a plain
// query and packs the response. The answer is made from the records at or
// below its name and at or below every name the resolver read for it
// (CNAME and glue targets); answers at a zone's apex (SOA, NS) and for
// names with a wildcard label are volatile. The SOA serial of negative
// answers is the revision.
func (w *wireAnswers) Answer(name string, qtype uint16) (fastpath.Answer, bool) {
	a := fastpath.Answer{Version: w.Version()} // before answering: the answer is at least this new
	zone, inZone := w.answerer.resolver.Zone(name)
	if !inZone { // the zones never change: neither will this
		return a, false
	}
	a.Zone = zone
	if a.Version == 0 {
		a.Volatile = true
		return a, false
	}
	req := new(dns.Msg)
	req.Question = []dns.Question{{Name: name, Qtype: qtype, Qclass: dns.ClassINET}}
	req.SetEdns0(uint16(w.maxUDPSize), false)
	a.Names = append(make([]string, 0, 4), name)
	visit := func(n string) { a.Names = appendName(a.Names, n) }
	ordinary := dnsserver.AnswerFunc(func(ctx context.Context, q dnsserver.Query) *dns.Msg { return w.answerer.answer(ctx, q, visit) })
	resp := dnsserver.Reply(context.Background(), ordinary, dnsserver.Query{Msg: req, Proto: "udp"}, w.maxUDPSize)
	a.Volatile, a.SerialIsVersion, a.Rotate = zone == name || anyWildcard(a.Names), true, w.answerer.rotate
	if _, leaves := w.answerer.resolver.ExternalTarget(resp); leaves {
		return a, false
	}
	if w.answerer.autopath && resp.Rcode == dns.RcodeNameError && w.answerer.resolver.MaybeSearchPath(name) {
		return a, false // a pod's search-path query: the answer depends on who asks
	}
	wire, err := resp.Pack()
	if err == nil && a.Rotate && !fastpath.Turnable(wire) {
		wire, err = packUncompressed(resp)
	}
	a.Wire = wire // the cache keeps a copy of its own
	return a, err == nil
}

// packUncompressed packs resp without name compression: with no pointer
// into its records (glue owners point into SRV targets when compressed),
// the fast path can turn them in place.
func packUncompressed(resp *dns.Msg) ([]byte, error) {
	resp.Compress = false
	return resp.Pack()
}

// appendName adds name to names unless it is there. The resolver's names
// are in lower case already.
func appendName(names []string, name string) []string {
	for _, n := range names {
		if n == name {
			return names
		}
	}
	return append(names, name)
}

// anyWildcard reports whether a name has a "*" or "any" label: changes
// below it cannot be found by walking up from the changed name.
func anyWildcard(names []string) bool {
	for _, name := range names {
		for rest := name; rest != ""; {
			var label string
			label, rest, _ = strings.Cut(rest, ".")
			if contract.IsWildcard(label) {
				return true
			}
		}
	}
	return false
}

// recordChanges tells the fast path's caches which names each update
// changes, before its snapshot is served.
func recordChanges(changes *fastpath.Changes, prefix string) func(prev, next *snapshot.Snapshot, u contract.Update) {
	return func(prev, next *snapshot.Snapshot, u contract.Update) {
		if u.Full { // every cached answer goes: the names would only take memory
			changes.Record(uint64(prev.Revision()), uint64(next.Revision()), nil, true)
			return
		}
		names := make([]string, 0, len(u.Events))
		for _, ev := range u.Events {
			if name, ok := contract.Name(prefix, ev.Key); ok {
				names = append(names, strings.ToLower(name))
			}
		}
		changes.Record(uint64(prev.Revision()), uint64(next.Revision()), names, false)
	}
}
