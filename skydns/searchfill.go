package skydns

import (
	"net/netip"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/skydns/dnsserver"
	"github.com/kubesky/kubesky/skydns/fastpath"
	"github.com/kubesky/kubesky/skydns/snapshot"
)

var _ fastpath.SearchSource = (*cacheFiller)(nil)

// PodOf reports whether client is a pod of namespace ns in the snapshot
// being served (verified pod records).
func (f *cacheFiller) PodOf(client netip.Addr, ns string) bool {
	return f.autopath && f.resolver.PodOf(f.mirror.Snapshot(), client, ns)
}

// FillSearch is the ordinary path's answer to a pod's first search-path
// query for name (router.searchPath): the first name of the search that
// the zones or the forwarder's cache answer NOERROR, behind a CNAME from
// name. A name the forwarder answers makes a Recursive answer, served and
// aged as fillForwarded's; one the zones answer depends on the names the
// search read, as Fill's. Searches that end otherwise (every name denied,
// a name not cached, a CNAME chain leaving the zones, a reverse zone),
// and every search with DNSSEC signing, stay on the ordinary path. With
// rotation the answer's records turn as the router turns them.
func (f *cacheFiller) FillSearch(name string, qtype uint16, client netip.Addr) (fastpath.Answer, bool) {
	snap := f.mirror.Snapshot()
	a := fastpath.Answer{Version: uint64(snap.Revision())}
	if !f.autopath || f.signer != nil || a.Version == 0 {
		return a, false
	}
	steps, ok := f.resolver.SearchPath(snap, name, client)
	if !ok {
		return a, false
	}
	req := plainQuery(name, qtype, f.maxUDPSize, false)
	req.RecursionDesired = true
	a.Names = append(make([]string, 0, 4), name)
	for _, step := range steps {
		stepReq := req.Copy()
		stepReq.Question[0].Name = step
		resp, done := f.searchStep(snap, stepReq, &a)
		switch {
		case done && resp != nil:
			a.Volatile, a.Rotate = anyWildcard(a.Names), f.rotate
			return f.packSearch(a, f.resolver.Autopath(req, resp), req)
		case done:
			return a, false
		}
	}
	return a, false
}

// searchStep answers one name of a search: resp, with done, when it ends
// the search (nil: on the ordinary path); not done when the zones deny
// the name and the search goes on. It notes in a what the answer depends
// on.
func (f *cacheFiller) searchStep(snap *snapshot.Snapshot, req *dns.Msg, a *fastpath.Answer) (resp *dns.Msg, done bool) {
	name := req.Question[0].Name
	zone, inZone := f.resolver.Match(name)
	if !inZone {
		return f.searchForwarded(req, a), true
	}
	if zone.Reverse() {
		return nil, true
	}
	a.Names = appendName(a.Names, name)
	a.Zone = zone.Name()
	resp, external := f.resolver.ResolveIn(snap, zone, req, func(n string) { a.Names = appendName(a.Names, n) })
	switch {
	case external != "" || resp.Rcode != dns.RcodeSuccess && resp.Rcode != dns.RcodeNameError:
		return nil, true
	case resp.Rcode == dns.RcodeNameError:
		return nil, false
	}
	a.SerialIsVersion = true
	return resp, true
}

// searchForwarded is the forwarder's cached NOERROR reply to req, nil
// when it has none; a becomes Recursive.
func (f *cacheFiller) searchForwarded(req *dns.Msg, a *fastpath.Answer) *dns.Msg {
	if f.lender == nil {
		return nil
	}
	cached, ok := f.lender.CachedReply(req)
	if !ok || cached.Reply.Rcode != dns.RcodeSuccess {
		return nil
	}
	a.Recursive, a.CNAMEFirst = true, true
	a.Stored, a.Expires, a.Generation, a.Hit = cached.Stored, cached.Until, cached.Generation, cached.Hit
	return cached.Reply
}

// packSearch fits resp, the answer to req, to the largest UDP size and
// packs it into a.
func (f *cacheFiller) packSearch(a fastpath.Answer, resp, req *dns.Msg) (fastpath.Answer, bool) {
	dnsserver.Fit(resp, req, "udp", f.maxUDPSize)
	wire, err := resp.Pack()
	a.Wire = wire
	return a, err == nil
}
