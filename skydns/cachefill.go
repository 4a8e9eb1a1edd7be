package skydns

import (
	"net/netip"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/skydns/dnssec"
	"github.com/kubesky/kubesky/skydns/dnsserver"
	"github.com/kubesky/kubesky/skydns/fastpath"
	"github.com/kubesky/kubesky/skydns/resolver"
	"github.com/kubesky/kubesky/skydns/snapshot"
)

// cacheFiller is the fast path's Source: for a plain query, the response
// the ordinary path writes to it (the resolver's answer, EDNS, truncation),
// packed, and what it was made from; for names outside the zones, the
// forwarder's cached reply (fillForwarded). Names the forwarder has not
// cached, the time before the first list (SERVFAIL), answers whose
// CNAME chain leaves the zones (whether the external target is resolved
// depends on the client and its RD bit), NXDOMAIN in a zone that falls
// through (the forwarder may answer it, depending on the client) stay on
// the ordinary path. With autopath, the NXDOMAIN for a name a pod's search
// path makes is served to the clients that are not pods of its namespace;
// the pods get FillSearch's answer (searchfill.go).
type cacheFiller struct {
	resolver   *resolver.Resolver
	mirror     *Mirror
	maxUDPSize int
	rotate     bool           // as router.rotate: the fast path turns the records
	autopath   bool           // as router.autopath
	signer     *dnssec.Signer // as router.signer: the DNSKEY RRset at the apex
	names      *zoneNames
	// passOn is router.passOn.
	passOn fallthroughRule
	// lender, if set, lends the forwarder's cached replies to names
	// outside the zones (fillForwarded); without it they are markers.
	lender CacheLender
}

var _ fastpath.RecursiveSource = (*cacheFiller)(nil)

// RecursionAllowed is the forwarder's check: who may have its answers.
func (f *cacheFiller) RecursionAllowed(client netip.Addr) bool {
	return f.lender != nil && f.lender.RecursionAllowed(client)
}

// Generation is the forwarder's (forward.Forwarder.Generation), 0 without one.
func (f *cacheFiller) Generation() uint64 {
	if f.lender == nil {
		return 0
	}
	return f.lender.Generation()
}

var _ fastpath.Source = (*cacheFiller)(nil)

// Version is the revision of the snapshot being served: a new snapshot
// has a new revision, and one revision always holds the same records.
func (f *cacheFiller) Version() uint64 {
	return uint64(f.mirror.Snapshot().Revision())
}

var _ fastpath.DNSSECSource = (*cacheFiller)(nil)

// Fill resolves a plain query for name in the snapshot being served, fits
// the response to the largest UDP size and packs it. The answer is made
// from the records at or below its name and at or below every name the
// resolver read for it (CNAME and glue targets); answers at a zone's apex
// (SOA, NS) and for names with a wildcard label are volatile. The SOA
// serial of negative answers is the revision.
func (f *cacheFiller) Fill(name string, qtype uint16) (fastpath.Answer, bool) {
	return f.fill(name, qtype, false)
}

// FillDNSSEC is Fill for a query with the DO bit. In a signed zone the
// answer is signed (signAnswer): it also depends on the names its denial
// read, its SOA serial stays the one signed, and it expires while its
// signatures are still valid for a quarter of their validity.
func (f *cacheFiller) FillDNSSEC(name string, qtype uint16) (fastpath.Answer, bool) {
	return f.fill(name, qtype, true)
}

func (f *cacheFiller) fill(name string, qtype uint16, do bool) (fastpath.Answer, bool) {
	snap := f.mirror.Snapshot()
	a := fastpath.Answer{Version: uint64(snap.Revision())}
	zone, inZone := f.resolver.Match(name)
	if !inZone && f.lender != nil {
		return f.fillForwarded(name, qtype, do, a)
	}
	if !inZone { // the zones never change: neither will this
		return a, false
	}
	a.Zone = zone.Name()
	if a.Version == 0 {
		a.Volatile = true
		return a, false
	}
	req := plainQuery(name, qtype, f.maxUDPSize, do)
	a.Names = append(make([]string, 0, 4), name)
	visit := func(n string) { a.Names = appendName(a.Names, n) }
	resp, external := f.resolver.ResolveIn(snap, zone, req, visit)
	a.Volatile, a.SerialIsVersion, a.Rotate = a.Zone == name || anyWildcard(a.Names), true, f.rotate
	if external != "" {
		return a, false
	}
	if f.passOn.passesOn(zone) && resp.Rcode == dns.RcodeNameError {
		return a, false // the forwarder may answer it, for a client that may recurse
	}
	if f.autopath && resp.Rcode == dns.RcodeNameError {
		a.SearchNamespace, _ = f.resolver.SearchNamespace(name) // the namespace's pods get FillSearch's answer
	}
	if resp.Rcode == dns.RcodeNameError && !do && a.SearchNamespace == "" {
		f.denyBelow(&a, snap, zone, name)
	}
	if signAnswer(f.signer, f.names, resp, req, snap, zone, visit) && do {
		a.SerialIsVersion, a.Expires = false, time.Now().Add(f.signer.Validity()/4)
	}
	dnsserver.Fit(resp, req, "udp", f.maxUDPSize)
	wire, err := pack(resp, a.Rotate)
	a.Wire = wire // the cache keeps a copy of its own
	return a, err == nil
}

// fillForwarded is the ordinary path's answer to a plain query for name,
// outside the zones, with RD set, from a client that may recurse, while
// the forwarder's cache holds it: Recursive, served until the forwarder's
// Cached.Until, its TTLs aged from Cached.Stored.
func (f *cacheFiller) fillForwarded(name string, qtype uint16, do bool, a fastpath.Answer) (fastpath.Answer, bool) {
	a.Recursive = true
	req := plainQuery(name, qtype, f.maxUDPSize, do)
	req.RecursionDesired = true
	cached, ok := f.lender.CachedReply(req)
	if !ok {
		return a, false
	}
	dnsserver.Fit(cached.Reply, req, "udp", f.maxUDPSize)
	wire, err := cached.Reply.Pack()
	a.Wire, a.Stored, a.Expires, a.Generation, a.Hit = wire, cached.Stored, cached.Until, cached.Generation, cached.Hit
	return a, err == nil
}

// denyBelow lets a, the NXDOMAIN for name, answer every name below the
// highest name that no record is at or below (resolver.DeniedBelow); with
// autopath, not where pods' search names may be (their answers depend on
// who asks).
func (f *cacheFiller) denyBelow(a *fastpath.Answer, snap *snapshot.Snapshot, zone resolver.ZoneMatch, name string) {
	cut := f.resolver.DeniedBelow(snap, zone, name)
	if cut == "" || f.autopath && f.mayBeSearched(cut) {
		return
	}
	a.DeniedBelow, a.Names = cut, appendName(a.Names, cut)
}

// mayBeSearched reports whether a name below cut may be a pod's search
// name.
func (f *cacheFiller) mayBeSearched(cut string) bool {
	_, ok := f.resolver.SearchNamespace("x.x." + cut)
	return ok
}

// plainQuery is the query the fast path answers from its caches for name
// and qtype: class IN, ID 0, RD and CD clear, EDNS0 with maxUDPSize and
// the DO bit when do is set.
func plainQuery(name string, qtype uint16, maxUDPSize int, do bool) *dns.Msg {
	req := new(dns.Msg)
	req.Question = []dns.Question{{Name: name, Qtype: qtype, Qclass: dns.ClassINET}}
	req.SetEdns0(uint16(maxUDPSize), do)
	return req
}

// pack packs resp; an answer to rotate whose records the fast path cannot
// turn in place is packed again without compression.
func pack(resp *dns.Msg, rotate bool) ([]byte, error) {
	wire, err := resp.Pack()
	if err == nil && rotate && !fastpath.Turnable(wire) {
		wire, err = packUncompressed(resp)
	}
	return wire, err
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
// changes, before its snapshot is served; nil without changes.
func recordChanges(changes *fastpath.Changes, prefix string) func(prev, next *snapshot.Snapshot, u contract.Update) {
	if changes == nil {
		return nil
	}
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
