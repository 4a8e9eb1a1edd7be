package fastpath

import (
	"encoding/binary"
	"net"
	"time"
)

// bitAD is the AD bit (authentic data) of a header's byte 3: a query
// with it may get another AD bit in a forwarded answer.
const bitAD = 0x20

// forwarded is what a Recursive answer's entry adds: how its TTLs age.
type forwarded struct {
	stored     int64    // Unix nanoseconds at which the TTLs were as packed
	generation uint64   // the RecursiveSource's generation it was filled at
	ttls       []uint16 // offsets of its records' TTL fields (not the OPT's)
	hit        func()   // counts a reply with the forwarder; may be nil
}

// fillRecursive makes the entry of a Recursive answer a to q and keeps it
// under key. An answer that cannot be served (not usable, no expiry, no
// source to check clients with) leaves no marker: the ordinary path
// answers, and fills the forwarder's cache the next fill finds.
func (c *Cache) fillRecursive(key []byte, q query, a Answer, usable bool) entry {
	ttls, ok := ttlOffsets(a.Wire)
	if ok && a.CNAMEFirst {
		ttls, ok = ttls[1:], len(ttls) > 0
	}
	if !usable || !ok || a.Expires.IsZero() || c.recursive == nil {
		return entry{}
	}
	e := entry{
		series:   c.cfg.Stats.stats.Series(a.Zone, q.qtype, true, int(a.Wire[3]&0xF)),
		expires:  a.Expires.Unix(),
		fwd:      &forwarded{stored: a.Stored.UnixNano(), generation: a.Generation, ttls: ttls, hit: a.Hit},
		searchNS: a.SearchNamespace,
	}
	if a.Rotate {
		// Records of one size keep their TTLs' offsets when turned.
		rot, wire := rotationOf(a.Wire)
		if wire == nil || rot.n > 1 && rot.size == 0 {
			return entry{}
		}
		e.rot = rot
	}
	return c.store.keep(key, a.Wire, e, a)
}

// mayRecurse reports whether the query pkt from client may have a
// Recursive answer: RD set, CD and AD clear, and a client the source
// allows.
func (c *Cache) mayRecurse(pkt []byte, client net.Addr) bool {
	if pkt[2]&bitRD == 0 || pkt[3]&(bitCD|bitAD) != 0 {
		return false
	}
	addr, ok := clientAddr(client)
	return ok && c.recursive.RecursionAllowed(addr)
}

// serve ages the TTLs of resp, the entry's answer, to now (Unix
// nanoseconds) by the whole seconds since it was stored, as the forwarder
// does, and counts the reply.
func (f *forwarded) serve(resp []byte, now int64) {
	age := uint32(max(now-f.stored, 0) / int64(time.Second))
	for _, at := range f.ttls { // all before the OPT record, which a reply without EDNS leaves out
		ttl := binary.BigEndian.Uint32(resp[at:])
		binary.BigEndian.PutUint32(resp[at:], ttl-min(ttl, age))
	}
	if f.hit != nil {
		f.hit()
	}
}

// ttlOffsets returns the offsets of the TTL fields of the records of
// wire, a packed message with one question, but the OPT record's. ok is
// false when wire does not parse so.
func ttlOffsets(wire []byte) (_ []uint16, ok bool) {
	if len(wire) < headerLen || len(wire) > 0xFFFF || binary.BigEndian.Uint16(wire[4:]) != 1 {
		return nil, false
	}
	records := int(binary.BigEndian.Uint16(wire[6:])) + int(binary.BigEndian.Uint16(wire[8:])) + int(binary.BigEndian.Uint16(wire[arcountAt:]))
	off := skipName(wire, headerLen)
	if off < 0 {
		return nil, false
	}
	off += 4 // the question's type and class
	ttls := make([]uint16, 0, records)
	for range records {
		rdata := skipName(wire, off) + 10
		next := skipRR(wire, off)
		if next < 0 || next > len(wire) {
			return nil, false
		}
		if binary.BigEndian.Uint16(wire[rdata-10:]) != typeOPT {
			ttls = append(ttls, uint16(rdata-6))
		}
		off = next
	}
	return ttls, off == len(wire)
}
