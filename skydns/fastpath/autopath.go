package fastpath

import (
	"net"
	"net/netip"
)

// SearchSource is a Source whose answers to a pod's first search-path
// query (autopath) depend on the pod's namespace: Fill's answer to such
// a name carries the namespace (Answer.SearchNamespace), and is served
// to every client but that namespace's pods, which get FillSearch's.
type SearchSource interface {
	Source
	// PodOf reports whether client is a pod of namespace ns in the
	// version being served.
	PodOf(client netip.Addr, ns string) bool
	// FillSearch returns the ordinary path's answer to a plain query for
	// name (as Fill, RD set) from client, a pod of the namespace the name
	// searches. ok is false when the ordinary path must answer it. A
	// Recursive answer's first record may be the search path's CNAME
	// (Answer.CNAMEFirst), whose TTL does not age.
	FillSearch(name string, qtype uint16, client netip.Addr) (a Answer, ok bool)
}

// keySearch ends the cache key of the answer a pod of the searched
// namespace gets, after the key of the query's name and type.
const keySearch = 0xFE

// maxPods bounds the (client, namespace) checks a Cache remembers within
// one version; more empty the memory.
const maxPods = 4096

// podKey is one (client, namespace) check.
type podKey struct {
	client netip.Addr
	ns     string
}

// searchedEntry returns the entry that answers q, whose plain entry e
// names a searched namespace, from client: e itself for a client that is
// not a pod of that namespace, the pod's own otherwise. ok is false when
// the ordinary path must answer: an unknown client, a query with the DO
// bit from a pod, or a pod's answer the source cannot fill.
func (c *Cache) searchedEntry(e entry, key []byte, q query, client net.Addr) (entry, bool) {
	addr, known := clientAddr(client)
	if !known || c.search == nil {
		return entry{}, false
	}
	if !c.podOf(addr, e.searchNS) {
		return e, e.wire != ""
	}
	if q.do {
		return entry{}, false
	}
	key = append(key, keySearch)
	if found, _, ok := c.store.get(key, c.now, c.generation); ok {
		return found, true
	}
	return c.fillSearch(key, q, addr, e.searchNS)
}

// isPod reports whether client is a pod of namespace ns.
func (c *Cache) isPod(client net.Addr, ns string) bool {
	addr, known := clientAddr(client)
	return known && c.search != nil && c.podOf(addr, ns)
}

// podOf is the source's PodOf, remembered until the next version.
func (c *Cache) podOf(client netip.Addr, ns string) bool {
	k := podKey{client: client, ns: ns}
	if pod, ok := c.pods[k]; ok {
		return pod
	}
	if len(c.pods) >= maxPods {
		clear(c.pods)
	}
	pod := c.search.PodOf(client, ns)
	c.pods[k] = pod
	return pod
}

// forgetPods empties the remembered checks when the source's version is
// not the one they were made at.
func (c *Cache) forgetPods(version uint64) {
	if c.pods != nil && version != c.podsAt {
		clear(c.pods)
		c.podsAt = version
	}
}

// fillSearch asks the source for a pod's answer to q and keeps it under
// key. Not ok, it leaves no marker: the next query asks again.
func (c *Cache) fillSearch(key []byte, q query, client netip.Addr, ns string) (entry, bool) {
	name := key[:q.nameEnd-headerLen]
	c.cfg.Stats.fill()
	a, ok := c.search.FillSearch(presentationName(name), q.qtype, client)
	if !ok || !c.usable(a.Wire, name, false) {
		return entry{}, false
	}
	a.SearchNamespace = ns // lookup's caller finds the namespace there
	c.store.searches.Store(true)
	if a.Recursive {
		e := c.fillRecursive(key, q, a, true)
		return e, e.wire != ""
	}
	e, wire := entry{series: c.cfg.Stats.stats.Series(a.Zone, q.qtype, true, int(a.Wire[3]&0xF)), searchNS: ns}, a.Wire
	if a.SerialIsVersion {
		e.serialAt = int32(soaSerialAt(a.Wire))
	}
	if a.Rotate {
		if e.rot, wire = rotationOf(a.Wire); wire == nil {
			return entry{}, false
		}
	}
	return c.store.keep(key, wire, e, a), true
}

// clientAddr is client's address, if it has one.
func clientAddr(client net.Addr) (netip.Addr, bool) {
	a, ok := client.(interface{ AddrPort() netip.AddrPort })
	if !ok {
		return netip.Addr{}, false
	}
	return a.AddrPort().Addr().Unmap(), true
}
