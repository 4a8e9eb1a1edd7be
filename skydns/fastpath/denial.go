package fastpath

import (
	"encoding/binary"
)

// keyDenial ends the cache key of an answer that denies every name at or
// below the key's name (Answer.DeniedBelow), after that name and the type.
const keyDenial = 0xFD

// denial is what a denial entry adds: its wire answers the question for
// the denied name; a query for a name below it gets the same answer with
// its own question, the compression pointers after it moved by the
// difference of the names' lengths.
type denial struct {
	nameLen  int      // the wire length of the denied name, the answer's question
	pointers []uint16 // offsets of the compression pointers after the question
}

// keepDenial keeps a, the NXDOMAIN answer to q (its name at the start of
// key), as the answer of every name at or below a.DeniedBelow, and
// returns its entry. ok is false when the name denied is not a suffix of
// q's or the answer is not one a denial entry can serve.
func (c *Cache) keepDenial(key []byte, q query, a Answer) (entry, bool) {
	name := key[:q.nameEnd-headerLen]
	off, ok := suffixAt(name, a.DeniedBelow)
	if !ok {
		return entry{}, false
	}
	wire, d, ok := denialTemplate(a.Wire, len(name), len(name)-off)
	if !ok {
		return entry{}, false
	}
	dkey := append(append([]byte(nil), name[off:]...), key[len(name):len(name)+2]...)
	e := entry{series: c.cfg.Stats.stats.Series(a.Zone, q.qtype, true, int(wire[3]&0xF)), cut: d}
	if a.SerialIsVersion {
		e.serialAt = int32(soaSerialAt(wire))
	}
	return c.store.keep(append(dkey, keyDenial), wire, e, a), true
}

// suffixAt returns the offset of the wire name name's suffix that is the
// fully qualified lower-case name suffix.
func suffixAt(name []byte, suffix string) (int, bool) {
	for off := 0; off < len(name); off += 1 + int(name[off]) {
		if presentationName(name[off:]) == suffix {
			return off, true
		}
		if name[off] == 0 {
			break
		}
	}
	return 0, false
}

// denialTemplate turns wire, an NXDOMAIN answer whose question's name is
// nameLen bytes long, into the same answer to the question for that
// name's last cutLen bytes. ok is false unless wire holds exactly one SOA
// record in the authority section and an OPT record, and no compression
// pointer reaches into the labels removed.
func denialTemplate(wire []byte, nameLen, cutLen int) ([]byte, *denial, bool) {
	const rcodeNXDomain = 3
	if len(wire) < headerLen+nameLen+4 || wire[3]&0xF != rcodeNXDomain || string(wire[4:12]) != "\x00\x01\x00\x00\x00\x01\x00\x01" {
		return nil, nil, false
	}
	removed := nameLen - cutLen
	pointers, ok := soaPointers(wire, headerLen+nameLen+4)
	if !ok {
		return nil, nil, false
	}
	out := append(append(make([]byte, 0, len(wire)-removed), wire[:headerLen]...), wire[headerLen+removed:]...)
	for i, at := range pointers {
		target := int(binary.BigEndian.Uint16(wire[at:]) & 0x3FFF)
		if target < headerLen+removed {
			return nil, nil, false
		}
		pointers[i] = at - uint16(removed)
		binary.BigEndian.PutUint16(out[pointers[i]:], uint16(0xC000|(target-removed)))
	}
	return out, &denial{nameLen: cutLen, pointers: pointers}, true
}

// soaPointers returns the offsets of the compression pointers of the SOA
// record at off, which the OPT record must follow to the end of wire.
func soaPointers(wire []byte, off int) ([]uint16, bool) {
	var pointers []uint16
	off, pointers = namePointers(wire, off, pointers)
	if off < 0 || off+10 > len(wire) || binary.BigEndian.Uint16(wire[off:]) != typeSOA {
		return nil, false
	}
	end := off + 10 + int(binary.BigEndian.Uint16(wire[off+8:]))
	off, pointers = namePointers(wire, off+10, pointers)
	off, pointers = namePointers(wire, off, pointers)
	if off < 0 || off+20 != end || len(wire)-end != optLen || binary.BigEndian.Uint16(wire[end+1:]) != typeOPT {
		return nil, false
	}
	return pointers, true
}

// namePointers returns the offset past the name at off (-1 when it does
// not read) and pointers with the offset of its compression pointer, if it
// ends with one.
func namePointers(wire []byte, off int, pointers []uint16) (int, []uint16) {
	for off >= 0 && off < len(wire) {
		switch n := int(wire[off]); {
		case n == 0:
			return off + 1, pointers
		case n&0xC0 == 0xC0 && off+2 <= len(wire):
			return off + 2, append(pointers, uint16(off))
		case n&0xC0 != 0:
			return -1, pointers
		default:
			off += 1 + n
		}
	}
	return -1, pointers
}

// lookup returns, under one lock, the entry of key, the key of q, or
// else (without the DO bit) a pod's search answer for q (searched: for
// the pods of its namespace only), or else the denial entry of a name at
// or above q's; and the version the store is at.
func (c *Cache) lookup(key []byte, q query) (e entry, version uint64, searched, found bool) {
	s := c.store
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, found = s.getLocked(key, c.now, c.generation); found || q.do {
		return e, s.version, false, found
	}
	if c.search != nil && s.searches.Load() {
		if e, found = s.getLocked(append(key, keySearch), c.now, c.generation); found {
			return e, s.version, true, true // a search name: no denial covers it
		}
	}
	e, c.cutKey, found = s.denialLocked(key[:q.nameEnd-headerLen], q.qtype, c.cutKey)
	return e, s.version, false, found
}

// denialLocked returns the denial entry of a name at or above name (a
// wire name, lower case) for qtype, using scratch for the keys it tries.
// mu is held.
func (s *Store) denialLocked(name []byte, qtype uint16, scratch []byte) (entry, []byte, bool) {
	for off := 0; name[off] != 0; off += 1 + int(name[off]) {
		scratch = append(append(scratch[:0], name[off:]...), byte(qtype>>8), byte(qtype), keyDenial)
		if e, ok := s.entries[string(scratch)]; ok {
			return e, scratch, true
		}
	}
	return entry{}, scratch, false
}

// appendDenial appends the answer of e, a denial entry, to the query pkt
// for a name at or below e's, at version, to out.
func (c *Cache) appendDenial(out, pkt []byte, q query, e entry, version uint64, stream bool) ([]byte, Series, bool) {
	delta := q.nameEnd - headerLen - e.cut.nameLen
	n, fits := fitting(len(e.wire)+delta, q, c.cfg.MaxUDPSize, stream)
	if !fits {
		return out, Series{}, false
	}
	start := len(out)
	out = append(out, e.wire[:headerLen]...)
	out = append(out, pkt[headerLen:q.nameEnd]...)
	out = append(out, e.wire[headerLen+e.cut.nameLen:n-delta]...)
	resp := out[start:]
	for _, at := range e.cut.pointers {
		p := int(at) + delta
		binary.BigEndian.PutUint16(resp[p:], binary.BigEndian.Uint16(resp[p:])+uint16(delta))
	}
	patch(resp, pkt, q)
	if e.serialAt > 0 {
		binary.BigEndian.PutUint32(resp[int(e.serialAt)+delta:], uint32(version))
	}
	return out, e.series, true
}
