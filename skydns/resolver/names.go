package resolver

import (
	"strings"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/contract"
)

// isSubdomain reports whether child is parent or below it, ignoring ASCII
// case. Both are fully qualified. Names with escapes take miekg/dns's
// slower, exact path.
func isSubdomain(parent, child string) bool {
	if strings.IndexByte(child, '\\') >= 0 || strings.IndexByte(parent, '\\') >= 0 {
		return dns.IsSubDomain(parent, dns.Fqdn(child))
	}
	child = dns.Fqdn(child)
	if parent == "." {
		return true
	}
	if len(child) < len(parent) || !strings.EqualFold(child[len(child)-len(parent):], parent) {
		return false
	}
	return len(child) == len(parent) || child[len(child)-len(parent)-1] == '.'
}

// isBelow reports whether name is at or below pattern, where a "*" or
// "any" label of pattern matches any one label (a wildcard question's
// subtree).
func isBelow(pattern, name string) bool {
	if !hasWildcardLabel(pattern) {
		return isSubdomain(pattern, name)
	}
	pl := dns.SplitDomainName(pattern)
	nl := dns.SplitDomainName(strings.ToLower(name))
	if len(nl) < len(pl) {
		return false
	}
	nl = nl[len(nl)-len(pl):]
	for i, p := range pl {
		if p != nl[i] && !contract.IsWildcard(p) {
			return false
		}
	}
	return true
}

// hasWildcardLabel reports whether a lower-case name has a "*" or "any"
// label, without allocating.
func hasWildcardLabel(name string) bool {
	for name != "" {
		label, rest, _ := strings.Cut(name, ".")
		if contract.IsWildcard(label) {
			return true
		}
		name = rest
	}
	return false
}

// lowerFqdn returns name fully qualified and in lower case.
func lowerFqdn(name string) string {
	return dns.Fqdn(strings.ToLower(name))
}

// keyName returns the DNS name of a record's etcd key, with strip labels
// removed from its left; stripping every label leaves the name whole.
func (r *Resolver) keyName(key string, strip int) string {
	name, ok := contract.Name(r.prefix, key)
	if !ok {
		return "."
	}
	return targetStrip(name, strip)
}

// targetStrip removes n labels from the left of name, unless that would
// remove them all (SkyDNS's targetstrip).
func targetStrip(name string, n int) string {
	rest := name
	for range n {
		i := strings.IndexByte(rest, '.')
		if i < 0 || i == len(rest)-1 {
			return name
		}
		rest = rest[i+1:]
	}
	return rest
}
