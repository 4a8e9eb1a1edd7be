package rrl

// Truncate turns resp, a DNS response in wire format, into the slipped
// form of it: the header and the question only, TC set. It works in place
// and returns the shortened slice, or nil when resp is not a response
// with one readable question (then nothing should be sent).
func Truncate(resp []byte) []byte {
	const header = 12
	if len(resp) < header || resp[4] != 0 || resp[5] != 1 {
		return nil
	}
	end, ok := nameEnd(resp, header)
	if !ok || end+4 > len(resp) {
		return nil
	}
	resp[2] |= 0x02 // TC
	clear(resp[6:header])
	return resp[:end+4]
}

// nameEnd returns the offset after the name at off: a sequence of labels
// ending in the root label or a compression pointer.
func nameEnd(msg []byte, off int) (int, bool) {
	for off < len(msg) {
		n := int(msg[off])
		switch {
		case n == 0:
			return off + 1, true
		case n&0xC0 == 0xC0:
			return off + 2, off+2 <= len(msg)
		case n&0xC0 != 0:
			return 0, false
		}
		off += 1 + n
	}
	return 0, false
}
