package fastpath

import "encoding/binary"

const typeSOA = 6

// soaSerialAt returns the offset of the serial of the first SOA record in
// the authority section of a packed message, or 0 when there is none or
// the message does not read.
func soaSerialAt(msg []byte) int {
	if len(msg) < headerLen {
		return 0
	}
	an, ns := binary.BigEndian.Uint16(msg[6:]), binary.BigEndian.Uint16(msg[8:])
	off := skipName(msg, headerLen)
	if off < 0 {
		return 0
	}
	off += 4 // the question's type and class
	for range an {
		off = skipRR(msg, off)
	}
	for range ns {
		rdata := skipName(msg, off) + 10
		if off < 0 || rdata < 10 || rdata > len(msg) {
			return 0
		}
		if binary.BigEndian.Uint16(msg[rdata-10:]) == typeSOA {
			return soaSerial(msg, rdata)
		}
		off = skipRR(msg, off)
	}
	return 0
}

// soaSerial returns the offset of the serial in the SOA data at rdata.
func soaSerial(msg []byte, rdata int) int {
	serial := skipName(msg, skipName(msg, rdata))
	if serial <= 0 || serial+4 > len(msg) {
		return 0
	}
	return serial
}

// skipRR returns the offset past the record at off, or -1.
func skipRR(msg []byte, off int) int {
	rdata := skipName(msg, off) + 10
	if off < 0 || rdata < 10 || rdata > len(msg) {
		return -1
	}
	return rdata + int(binary.BigEndian.Uint16(msg[rdata-2:]))
}

// skipName returns the offset past the (possibly compressed) name at off,
// or -1.
func skipName(msg []byte, off int) int {
	for off >= 0 && off < len(msg) {
		switch n := int(msg[off]); {
		case n == 0:
			return off + 1
		case n&0xC0 == 0xC0:
			return off + 2
		case n > maxLabelLen:
			return -1
		default:
			off += 1 + n
		}
	}
	return -1
}
