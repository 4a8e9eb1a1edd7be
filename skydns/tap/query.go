package tap

import "encoding/binary"

// headerSize is a DNS header's length.
const headerSize = 12

// QueryOf rebuilds the query resp answers: resp's header with the QR, AA,
// TC, RA and AD bits and the rcode cleared and one question, followed by
// resp's question. nil when resp has no whole question. The question is
// the first name of a message, so it is never compressed.
func QueryOf(resp []byte) []byte {
	end := questionEnd(resp)
	if end < 0 {
		return nil
	}
	q := append([]byte(nil), resp[:end]...)
	const keep = 0x7800 | 0x0100 | 0x0010 // the opcode, RD and CD
	binary.BigEndian.PutUint16(q[2:], binary.BigEndian.Uint16(resp[2:])&keep)
	binary.BigEndian.PutUint16(q[4:], 1)
	clear(q[6:headerSize]) // no answer, authority or additional records
	return q
}

// questionEnd is the offset just past msg's first question, or -1.
func questionEnd(msg []byte) int {
	if len(msg) < headerSize || binary.BigEndian.Uint16(msg[4:]) == 0 {
		return -1
	}
	off := headerSize
	for off < len(msg) && msg[off] != 0 {
		if msg[off]&0xC0 != 0 {
			return -1
		}
		off += 1 + int(msg[off])
	}
	if end := off + 1 + 4; end <= len(msg) {
		return end
	}
	return -1
}
