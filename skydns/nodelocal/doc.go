// Package nodelocal prepares a node for a skydns that serves DNS on a
// node-local address (such as 169.254.20.10): an interface that holds the
// address (a dummy link, or an empty bridge where the kernel has no dummy
// driver), the address on it, and an nftables table that keeps DNS to and
// from the address out of conntrack.
//
// Setup is idempotent and never undoes anything: the address stays on the
// node after skydns exits, so that clients whose first nameserver it is get
// "port unreachable" at once and move to their second nameserver.
package nodelocal
