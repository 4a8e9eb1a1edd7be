// Package fastpath answers plain DNS queries over UDP by copying bytes.
//
// An immutable snapshot answers every query for one name and type the same
// way, whoever asks, so the answer can be packed once and served many times.
// A Cache holds such packed answers, filled lazily from a Source
// (the ordinary path: resolver, EDNS handling, packing) and emptied whenever
// the source's Version changes (a new snapshot). A plain query is answered by
// parsing its header and question, looking its lower-cased name and type up,
// and copying the cached bytes with the query's ID, RD and CD bits, the
// question's letter case (DNS 0x20) and its OPT record patched in.
//
// A query is plain when it is exactly: a header with opcode QUERY, QR clear,
// one question and no answer or authority records; a question of class IN
// whose name has only letters, digits, '-', '_' and '*'; and at most one
// additional record, an OPT of version 0 with no flags but DNSSEC's DO bit,
// no extended rcode and no options; and a type other than AXFR and IXFR. A
// query with the DO bit is keyed apart and filled by a DNSSECSource's
// FillDNSSEC (without one it is not plain). Everything else — other EDNS
// flags, EDNS options, several questions, other classes and
// opcodes, zone transfers (their answers depend on the client and the
// transport), malformed packets, names outside the zones the forwarder
// has not cached, answers that depend on the client (a CNAME whose
// external target the forwarder resolves) or that do not fit the
// requester's size (TC) — goes to the ordinary path.
//
// A RecursiveSource also lends the forwarder's cached replies (Recursive
// answers, recursive.go): the one exception to "whoever asks". Such an
// entry is served only to a query with RD set and CD and AD clear from a
// client the source allows (checked per query, so a new ACL applies at
// once), with every TTL lowered by the whole seconds since the forwarder
// stored it, until the source's end for it (the start of the prefetch
// window, or its expiry) and while the source's Generation stays (new
// upstreams, cache or stub domains); other queries for it take the
// ordinary path, which refuses or forwards them as before. Each reply
// counts as a hit of the forwarder's cache.
//
// A SearchSource (autopath) makes a second exception: the NXDOMAIN of a
// name a pod's search path makes names the namespace searched, and is
// served to every client but that namespace's pods, which get the answer
// the search reaches (a Recursive one when the forwarder's cache gives it,
// its CNAME's TTL not aged); whether a client is such a pod is asked once
// per version and remembered by each Cache.
//
// An NXDOMAIN whose Source names a denied name above its question
// (Answer.DeniedBelow: nothing is at or below it) is kept once, for that
// name and type, and answers every name below it (RFC 8020): the
// question is copied in and the compression pointers after it are moved.
// A change below the denied name drops it, as any answer made from it.
//
// The bytes served for a query are the ordinary path's bytes for the same
// query with its name in lower case, with the ID and the question's case
// patched. (The ordinary path compresses names case-sensitively, so for a
// mixed-case question it may point into the question less often; the two
// messages are then equal record for record, ignoring the case of names.)
//
// A Server reads UDP with recvmmsg (on Linux its own call, into sender
// addresses it reuses; elsewhere golang.org/x/net/ipv4's ReadBatch) and
// answers with sendmmsg (x/net's WriteBatch), one socket per reader goroutine, the
// sockets sharing one port with SO_REUSEPORT. Queries it does not answer are
// handed, unchanged, to a net.PacketConn (Server.Fallback) that an ordinary
// miekg/dns server reads from; its answers go out through the same port.
package fastpath
