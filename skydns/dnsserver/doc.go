// Package dnsserver serves DNS over UDP and TCP on one address and leaves
// the answers to a Responder. It owns what is about transport, not data:
// EDNS0 buffer sizes (the requester's size, at least 512 and at most
// MaxUDPSize over UDP; 64 KiB over TCP), echoing an OPT record to EDNS
// queries, truncation with the TC bit, name compression, FORMERR for
// packets whose header parses but whose body does not (and silence for
// the rest), and a graceful shutdown. It bounds what clients may hold: TCP
// connections at once, their idle and unread-answer time, the queries of
// one connection, and the UDP queries the ordinary path works on at once.
package dnsserver
