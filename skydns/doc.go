// Package skydns is the DNS daemon around the resolver: it mirrors the
// SkyDNS records under an etcd prefix into immutable snapshots, answers
// queries for its zones from the newest snapshot over UDP and TCP, and
// reports its health and metrics over HTTP.
//
// # Data flow
//
//	etcd ─ListWatcher─▶ Mirror.apply ─snapshot.Apply─▶ atomic snapshot ◀─ router ◀─ dnsserver
//	                        │                              ▲              └─ Forwarder (names outside the zones)
//	                        │                              └─ cacheFiller ◀─ fastpath (a cache miss)
//	                        └─ state, metrics ─▶ /readyz, /metrics
//
// The ordinary path: dnsserver calls its Responder, the router, which
// matches the question's zone once (resolver.Match) and sends it to the
// resolver over the newest snapshot (resolver.ResolveIn) or to the
// Forwarder. ResolveIn also names the external target an answer's CNAME
// chain ends on, which the router has the forwarder resolve
// (ExternalResolver). A fast path cache miss is one straight chain:
// fastpath.Cache asks its Source, the cacheFiller, which matches the zone,
// resolves in the snapshot whose revision is the answer's version, fits
// the response to the UDP size (dnsserver.Fit) and packs it; answers with
// an external target stay on the ordinary path.
//
// Queries never touch etcd: every answer is computed by the pure resolver
// from the snapshot published for one etcd revision. While etcd is away the
// last snapshot keeps being served, /readyz stays ready (it means "I can
// answer") and skydns_snapshot_stale_seconds says how old the snapshot is.
// On a stop signal the daemon answers for a lameduck with /readyz 503
// before it closes its listeners (ready.go).
//
// With no etcd endpoints the daemon starts an embedded etcd with a
// persistent data dir, so one binary is a complete SkyDNS.
package skydns
