// Package snapshot holds an immutable, in-memory copy of the SkyDNS records
// under one etcd prefix, shaped for DNS lookups.
//
// A Snapshot is built by applying contract.Update values to Empty(prefix):
// every Apply returns a new Snapshot and leaves the old one untouched, so
// readers need no locks. Values are decoded once, at apply time.
//
// # Tree layout
//
// The records live in a table sorted bytewise by tree key (see table).
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
// The table is a list of leaves, each one string packing about 32
// consecutive records: the bytes their keys share are stored once, then
// each key's rest and its packed value (see value). Lookups unpack a record
// into an Entry, whose key is two substrings of the leaf; Entry.Key
// rebuilds the etcd key on demand. Leaves are held in groups of up to 128:
// a watch update repacks only the leaves its keys fall in and copies their
// groups and the list of groups. A full list is packed as it arrives (see
// Builder).
package snapshot
