package hosts

import (
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/kube2sky/records"
)

// Config says where host records go and what they carry.
type Config struct {
	Prefix string // the etcd prefix, "/skydns"
	// Domain is where every name goes, "hosts.cluster.local.".
	Domain string
	// ExtraDomain, if set, gets every name too, "example.corp.".
	ExtraDomain string
	TTL         uint32
	Owner       string
}

// Records parses every data key's text (in key order) and returns the
// records of the lines that can be served, sorted by key, and the
// problems of those that cannot.
func Records(cfg Config, data map[string]string) ([]records.Entry, []Problem) {
	b := builder{cfg: cfg, entries: map[string]records.Entry{}, ptrs: map[netip.Addr]bool{}}
	var problems []Problem
	for _, key := range slices.Sorted(maps.Keys(data)) {
		lines, bad := Parse(key, data[key])
		problems = append(problems, bad...)
		for _, l := range lines {
			if reason := b.add(l); reason != "" {
				problems = append(problems, Problem{Key: l.Key, Line: l.Number, Text: lineText(l), Reason: reason})
			}
		}
	}
	return b.sorted(), problems
}

// builder collects the records of the lines added so far.
type builder struct {
	cfg     Config
	entries map[string]records.Entry // by key
	ptrs    map[netip.Addr]bool      // addresses whose PTR is written
}

// add writes a line's records, all or none; it returns why not.
func (b *builder) add(l Line) string {
	var fqdns []string
	ptr := ""
	for _, n := range l.Names {
		names, reason := b.fqdns(n)
		if reason != "" {
			return reason
		}
		if ptr == "" {
			ptr = names[len(names)-1] // the first name, in the extra domain if any
		}
		fqdns = append(fqdns, names...)
	}
	host := l.Addr.String()
	for _, fqdn := range fqdns {
		b.put(contract.Key(b.cfg.Prefix, b.storeName(fqdn))+"/"+records.HashLabel(host, 0), host)
	}
	if !b.ptrs[l.Addr] {
		b.ptrs[l.Addr] = true
		b.put(contract.ReverseKey(b.cfg.Prefix, l.Addr), ptr)
	}
	return ""
}

func (b *builder) put(key, host string) {
	b.entries[key] = records.Entry{Key: key, Record: contract.Record{Host: host, TTL: b.cfg.TTL, Owner: b.cfg.Owner}}
}

// storeName is the name whose key holds fqdn's records: ExtraDomain's
// apex (a zone skydns serves) keeps them apart from the zone's subtree.
func (b *builder) storeName(fqdn string) string {
	if b.isExtraApex(strings.TrimSuffix(fqdn, ".")) {
		return contract.ApexName(fqdn)
	}
	return fqdn
}

func (b *builder) isExtraApex(name string) bool {
	return b.cfg.ExtraDomain != "" && name == strings.TrimSuffix(b.cfg.ExtraDomain, ".")
}

// fqdns returns the names a hosts-file name stands for: under Domain and,
// if set, under ExtraDomain (last). A name already ending in one of them is
// taken relative to it; ExtraDomain itself is a name only there.
func (b *builder) fqdns(name string) ([]string, string) {
	if b.isExtraApex(name) {
		return []string{name + "."}, ""
	}
	rel := name
	for _, d := range []string{b.cfg.ExtraDomain, b.cfg.Domain} {
		d = strings.TrimSuffix(d, ".")
		if d == "" {
			continue
		}
		if name == d {
			return nil, "names the domain itself, not a host in it"
		}
		if r, ok := strings.CutSuffix(name, "."+d); ok {
			rel = r
			break
		}
	}
	var out []string
	for _, d := range []string{b.cfg.Domain, b.cfg.ExtraDomain} {
		if d == "" {
			continue
		}
		fqdn := rel + "." + strings.TrimSuffix(d, ".") + "."
		if !contract.ValidDomain(fqdn) {
			return nil, "too long once the domain " + d + " is added"
		}
		out = append(out, fqdn)
	}
	return out, ""
}

func (b *builder) sorted() []records.Entry {
	out := make([]records.Entry, 0, len(b.entries))
	for _, k := range slices.Sorted(maps.Keys(b.entries)) {
		out = append(out, b.entries[k])
	}
	return out
}

func lineText(l Line) string {
	return quoteText(l.Addr.String() + " " + strings.Join(l.Names, " "))
}
