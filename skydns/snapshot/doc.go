// Package snapshot holds an immutable, in-memory copy of the SkyDNS records
// under one etcd prefix, shaped for DNS lookups.
//
// A Snapshot is built by applying contract.Update values to Empty(prefix):
// every Apply returns a new Snapshot and leaves the old one untouched, so
// readers need no locks. Values are decoded once, at apply time.
//
// # Tree layout
//
// The records live in a persistent sorted map, a copy-on-write B+tree
// (github.com/benbjohnson/immutable's SortedMap) ordered bytewise by tree key.
// The tree key is the etcd key relative to the prefix, with a "/" appended,
// so that the keys at or below a name are next to each other: one seek and a
// walk while the prefix holds finds a name's own record and everything below
// it, and nothing of a sibling that merely shares leading characters:
//
//	etcd key                                  tree key
//	/skydns/local/cluster/svc/default/web     local/cluster/svc/default/web/
//	/skydns/local/cluster/svc/default/web/a1  local/cluster/svc/default/web/a1/
//	/skydns/local/cluster/svc/default/webx/b  local/cluster/svc/default/webx/b/   (not under "web/")
//
// Each record is one string: its tree key followed by its packed value (see
// value), which the tree holds as two substrings. Lookups unpack it into an
// Entry; Entry.Key rebuilds the etcd key from the tree key on demand. A
// full list is sorted and built in place with the library's builder,
// every other key first so that the leaves end up full (see buildTree); a
// watch update copies only the nodes on the paths of the keys it changes.
package snapshot
