// Package skydns is the DNS daemon around the resolver: it mirrors the
// SkyDNS records under an etcd prefix into immutable snapshots, answers
// queries for its zones from the newest snapshot over UDP and TCP, and
// reports its health and metrics over HTTP.
//
// # Data flow
//
//	etcd ─ListWatcher─▶ Mirror.apply ─snapshot.Apply─▶ atomic snapshot ◀─ Answerer ◀─ dnsserver
//	                        │                                               │
//	                        └─ state, metrics ─▶ /readyz, /metrics          └─ Forwarder (names outside the zones)
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
