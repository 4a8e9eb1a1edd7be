package forward

import "net/netip"

// acl is the set of client prefixes allowed recursion.
type acl []netip.Prefix

// allows reports whether client is inside one of the prefixes. IPv4 clients
// seen through an IPv6 socket (::ffff:10.1.2.3) count as IPv4.
func (a acl) allows(client netip.Addr) bool {
	client = client.Unmap()
	for _, p := range a {
		if p.Contains(client) {
			return true
		}
	}
	return false
}
