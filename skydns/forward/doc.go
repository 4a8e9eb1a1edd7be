// Package forward answers the names skydns does not serve itself: it sends
// them to upstream servers, caches the answers, routes stub domains to their
// own servers, and resolves the out-of-zone targets of the zones' CNAME
// chains (ResolveExternal).
//
// # Who gets recursion
//
// Only clients inside the --allow-recursion prefixes (by default loopback and
// the private ranges pods use) and only queries with the RD bit set are
// forwarded. Everyone and everything else gets REFUSED, so skydns is never an
// open resolver.
//
// # Upstreams
//
// A query goes to one upstream at a time over UDP, again over TCP when the
// reply is truncated, each attempt bounded by --forward-timeout and the whole
// query by --forward-deadline. An upstream that fails is marked down, tried
// last, and probed every --forward-health-check until it answers again; the
// healthy ones take turns. At most --forward-max-concurrent queries are in
// flight to one upstream. When none answers the client gets a stale answer
// (--serve-stale) or SERVFAIL.
//
// # Forged answers
//
// Each UDP query leaves from a socket of its own, on a port the kernel
// picks at random, with a random ID, a DNS cookie (RFC 7873) and the name
// in random case (0x20, dropped for an upstream that does not keep case).
// A datagram is taken as the reply only if its source, ID, question (case
// included) and cookie all match; anything else is counted in
// skydns_forward_ignored_replies_total and the read goes on until the
// timeout, so a forged or broken datagram never costs the real answer.
//
// # Stub domains
//
// A name under a stub domain goes to that domain's servers instead; the
// longest matching domain wins. Stub domains come from --stub-domain flags and
// from the server through SetStubs, which reads SkyDNS's dns/stub records:
//
//	/skydns/local/cluster/dns/stub/corp/example/ns1 = {"host":"10.0.0.53","port":53}
//
// makes example.corp. a stub domain served by 10.0.0.53:53 (the last key
// label, ns1, only tells several servers apart).
//
// # Cache
//
// Answers are cached in an LRU of --cache-size entries: positive ones for
// the smallest TTL in the reply, negative ones (NXDOMAIN, NODATA) for the
// SOA's negative TTL capped by --cache-max-negative-ttl; no TTL stored or
// served exceeds Config.MaxTTL (skydns's --max-ttl).
// Served TTLs count down with the entry's age. Identical queries that miss
// together share one upstream exchange. Popular entries are refreshed in
// the background before they expire (--cache-prefetch), and expired ones
// stay as a fallback for --serve-stale.
package forward
