package forward

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/miekg/dns"
)

// route is a set of servers a query can go to: the default upstreams, or
// the servers of one stub domain.
type route struct {
	domain string // "" for the default upstreams
	addrs  []string
	id     string        // domain and servers; part of every cache key
	turn   atomic.Uint64 // round-robin position among the healthy servers
}

func newRoute(domain string, servers []netip.AddrPort) *route {
	r := &route{domain: domain}
	for _, s := range servers {
		if a := s.String(); !slices.Contains(r.addrs, a) {
			r.addrs = append(r.addrs, a)
		}
	}
	r.id = domain + "=" + strings.Join(r.addrs, ",")
	return r
}

// stubTable maps stub domains (lower-case FQDNs) to their routes. A
// published table is never changed; SetStubs replaces it.
type stubTable map[string]*route

func newStubTable(stubs map[string][]netip.AddrPort) stubTable {
	t := stubTable{}
	for domain, servers := range stubs {
		if len(servers) > 0 {
			t[domain] = newRoute(domain, servers)
		}
	}
	return t
}

// lookup returns the route of the longest stub domain at or above name (a
// lower-case FQDN), or nil.
func (t stubTable) lookup(name string) *route {
	if len(t) == 0 {
		return nil
	}
	for off := 0; ; {
		if r, ok := t[name[off:]]; ok {
			return r
		}
		next, end := dns.NextLabel(name, off)
		if end {
			return nil
		}
		off = next
	}
}

// routes returns the table's routes.
func (t stubTable) routes() []*route {
	return slices.Collect(maps.Values(t))
}

// sameAs reports whether both tables send every domain to the same servers.
func (t stubTable) sameAs(u stubTable) bool {
	return maps.EqualFunc(t, u, func(a, b *route) bool { return a.id == b.id })
}

func (t stubTable) String() string {
	ids := make([]string, 0, len(t))
	for _, r := range t {
		ids = append(ids, r.id)
	}
	slices.Sort(ids)
	return strings.Join(ids, " ")
}

// SetStubs replaces the stub domains that come from the server (SkyDNS's
// dns/stub records): domain -> servers ("ip" or "ip:port"). Domains from
// --stub-domain take precedence over the same domain here. Entries that are
// not valid, or that point at this server, are left out and logged once.
// The server calls it whenever its records change; an unchanged set costs a
// comparison.
func (f *Forwarder) SetStubs(stubs map[string][]string) {
	f.setStubs(stubs, nil)
}

// setStubs is SetStubs with problems found before, to be logged once too.
func (f *Forwarder) setStubs(stubs map[string][]string, problems []string) {
	f.stubMu.Lock()
	defer f.stubMu.Unlock()
	f.etcdStubs, f.etcdProblems = stubs, problems
	f.applyStubs()
}

// applyStubs installs the stub domains of the last SetStubs merged with
// --stub-domain's, logging the problems not logged before. Callers hold
// stubMu.
func (f *Forwarder) applyStubs() {
	merged, more := f.parseStubs(f.etcdStubs)
	maps.Copy(merged, f.staticStubs)
	f.reportNew(append(slices.Clone(f.etcdProblems), more...))
	table := newStubTable(merged)
	if table.sameAs(*f.stubs.Load()) {
		return
	}
	f.stubs.Store(&table)
	f.bumpGeneration()
	f.logger.Info("stub domains changed", "stubs", table.String())
}

// parseStubs converts SetStubs' argument, returning each problem as a line.
func (f *Forwarder) parseStubs(stubs map[string][]string) (map[string][]netip.AddrPort, []string) {
	out := map[string][]netip.AddrPort{}
	var problems []string
	for name, servers := range stubs {
		domain, err := stubDomain(name)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		for _, s := range servers {
			ap, err := f.stubServer(s)
			if err != nil {
				problems = append(problems, fmt.Sprintf("stub domain %s: server %q: %v", domain, s, err))
				continue
			}
			out[domain] = append(out[domain], ap)
		}
	}
	return out, problems
}

func (f *Forwarder) stubServer(s string) (netip.AddrPort, error) {
	ap, err := parseServer(s)
	if err == nil && isSelf(ap, f.listen, f.local) {
		err = errors.New("is this server")
	}
	return ap, err
}

// reportNew logs the problems not reported by the previous call.
// Callers hold stubMu.
func (f *Forwarder) reportNew(problems []string) {
	seen := make(map[string]bool, len(problems))
	for _, p := range problems {
		if !f.stubProblems[p] {
			f.logger.Warn("ignoring stub domain entry", "problem", p)
		}
		seen[p] = true
	}
	f.stubProblems = seen
}
