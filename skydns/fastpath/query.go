package fastpath

import (
	"encoding/binary"

	"github.com/miekg/dns"
)

// Wire-format sizes and offsets.
const (
	headerLen   = 12
	optLen      = 11 // an OPT record with the root name and no options
	maxNameLen  = 255
	maxLabelLen = 63
	minMsgSize  = 512 // the UDP limit without EDNS0
	typeOPT     = 41
	classINET   = 1
)

// Header bits the fast path reads or patches.
const (
	bitQR     = 0x80 // byte 2
	maskOp    = 0x78 // byte 2: the opcode
	bitRD     = 0x01 // byte 2
	bitCD     = 0x10 // byte 3
	arcountAt = 10
)

// query is what the fast path needs of a plain query.
type query struct {
	nameEnd int    // the question's name is pkt[headerLen:nameEnd]
	qtype   uint16 //
	edns    bool   // the query has an OPT record
	udpSize uint16 // its EDNS0 buffer size
	do      bool   // its DO bit (DNSSEC OK) is set
}

// keyDO ends the cache key of a query with the DO bit: its answer is
// another than the same question's without it.
const keyDO = 0xFF

// parseQuery reads pkt as a plain query (see the package doc) and appends
// its cache key, the lower-cased wire name and the type (and keyDO with
// the DO bit), to key. ok is false for anything else.
func parseQuery(pkt, key []byte) (q query, _ []byte, ok bool) {
	if len(pkt) < headerLen+1+4 || !plainHeader(pkt) {
		return q, key, false
	}
	key, q.nameEnd, ok = appendLowerName(key, pkt, headerLen)
	if !ok || len(pkt) < q.nameEnd+4 {
		return q, key, false
	}
	q.qtype = binary.BigEndian.Uint16(pkt[q.nameEnd:])
	if q.qtype == dns.TypeAXFR || q.qtype == dns.TypeIXFR || binary.BigEndian.Uint16(pkt[q.nameEnd+2:]) != classINET {
		return q, key, false
	}
	key = binary.BigEndian.AppendUint16(key, q.qtype)
	rest := pkt[q.nameEnd+4:]
	if pkt[arcountAt+1] == 0 {
		return q, key, len(rest) == 0
	}
	q.edns = true
	q.udpSize, q.do, ok = plainOPT(rest)
	if q.do {
		key = append(key, keyDO)
	}
	return q, key, ok
}

// servfail appends to out[:0] a SERVFAIL response to the plain query pkt:
// its header and question, no records. ok is false when pkt is not a
// plain query.
func servfail(out, pkt []byte) (_ []byte, ok bool) {
	const rcodeServFail = 2
	q, _, ok := parseQuery(pkt, nil)
	if !ok {
		return out, false
	}
	out = append(out[:0], pkt[:q.nameEnd+4]...)
	out[2] = out[2]&(maskOp|bitRD) | bitQR
	out[3] = out[3]&bitCD | rcodeServFail
	clear(out[6:headerLen]) // no answer, authority or additional records
	return out, true
}

// plainHeader reports whether the header is a query with opcode QUERY, one
// question, no answer or authority records and at most one additional.
func plainHeader(pkt []byte) bool {
	if pkt[2]&(bitQR|maskOp) != 0 {
		return false
	}
	counts := pkt[4:headerLen]
	return counts[0] == 0 && counts[1] == 1 && // QDCOUNT 1
		counts[2]|counts[3]|counts[4]|counts[5]|counts[6] == 0 && counts[7] <= 1 // AN, NS 0; AR 0 or 1
}

// plainOPT returns the buffer size of rest and its DO bit when it is
// exactly one OPT record of version 0 with no flags but DO, no extended
// rcode and no options.
func plainOPT(rest []byte) (size uint16, do, ok bool) {
	const flagDO = 0x80 // the high byte of the flags
	if len(rest) != optLen || rest[0] != 0 || binary.BigEndian.Uint16(rest[1:]) != typeOPT {
		return 0, false, false
	}
	do = rest[7] == flagDO
	for i, b := range rest[5:] { // TTL (extended rcode, version, flags) and RDLENGTH
		if b != 0 && !(i == 2 && do) {
			return 0, false, false
		}
	}
	return binary.BigEndian.Uint16(rest[3:]), do, true
}

// appendLowerName appends the uncompressed name at pkt[off:] to key, in
// lower case, and returns the offset past it. ok is false when the name is
// compressed, too long, or has a byte other than a letter, digit, '-', '_'
// or '*' (names the ordinary path would print with escapes).
func appendLowerName(key, pkt []byte, off int) (_ []byte, end int, ok bool) {
	start := len(key)
	for {
		if off >= len(pkt) {
			return key, 0, false
		}
		n := int(pkt[off])
		if n == 0 {
			key = append(key, 0)
			return key, off + 1, len(key)-start <= maxNameLen
		}
		if n > maxLabelLen || off+1+n > len(pkt) {
			return key, 0, false
		}
		key = append(key, pkt[off:off+1+n]...)
		if !lowerInPlace(key[len(key)-n:]) {
			return key, 0, false
		}
		off += 1 + n
	}
}

// lowerInPlace lower-cases a label, and reports whether every byte is
// allowed in a fast-path name.
func lowerInPlace(label []byte) bool {
	// Every allowed byte maps to one in ['*', 'z'], so l-1 has its top bit
	// clear; a 0 (not allowed) wraps to 0xFF. No branch per byte.
	var bad byte
	for i, c := range label {
		l := lowerTable[c]
		bad |= l - 1
		label[i] = l
	}
	return bad&0x80 == 0
}

// lowerTable maps the bytes allowed in a fast-path name to their lower
// case, and every other byte to 0.
var lowerTable = func() (t [256]byte) {
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = byte(c), byte(c)
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c)
	}
	for _, c := range "-_*" {
		t[c] = byte(c)
	}
	return t
}()

// presentationName turns a wire name from a cache key (plain labels only)
// into the fully qualified text form the ordinary path reads.
func presentationName(wire []byte) string {
	if len(wire) <= 1 {
		return "."
	}
	out := make([]byte, 0, len(wire))
	for i := 0; wire[i] != 0; i += 1 + int(wire[i]) {
		out = append(append(out, wire[i+1:i+1+int(wire[i])]...), '.')
	}
	return string(out)
}
