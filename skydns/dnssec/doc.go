// Package dnssec signs skydns's answers online: DNSKEY at each signed
// zone's apex, RRSIGs on every RRset of an answer to a query with the DO
// bit, and authenticated denial with NSEC3 "white lies" (RFC 7129,
// RFC 5155 with no salt and no extra iterations, RFC 9276).
//
// Keys are BIND-style files (K<zone>+013+<tag>.key and .private, as
// dnssec-keygen and miekg/dns write them), ECDSA P-256 (algorithm 13): one
// CSK, or KSKs (flag 257) and ZSKs (flag 256). Every key of a zone is
// published in its DNSKEY RRset; the DNSKEY RRset is signed by the KSKs
// (every key when there is none), every other RRset by the ZSKs (every key
// when there is none). Two keys of one role sign side by side, which is
// how a key is rolled: add the new key, wait, remove the old one.
//
// # Denial
//
// A name that does not exist keeps rcode NXDOMAIN (the Kubernetes DNS
// specification and its tests expect it). NXDOMAIN needs a proof that the
// name and the wildcard at its closest encloser do not exist, which compact
// denial's NSEC at the name itself (RFC 9824) cannot give with that rcode,
// so the proof is NSEC3 made for the query: one NSEC3 matching the closest
// encloser, with its types, and two whose hashes are the hash of the next
// closer name and of the wildcard, minus and plus one (RFC 7129 appendix
// B). No zone walk is possible and nothing but the answered names is
// revealed. NODATA is an NSEC3 matching the name, with the types it has.
//
// # Signatures
//
// Signatures are kept in a cache keyed by the RRset's content (owner,
// type and records, in canonical order): an RRset is signed once, reused by
// every answer and every snapshot that has the same records, signed again
// when a snapshot changes it (its key changes) and when half its validity
// has passed.
package dnssec
