package fastpath

import "encoding/binary"

// Record types the rotation reads.
const (
	typeA     = 1
	typeNS    = 2
	typeCNAME = 5
	typePTR   = 12
	typeHINFO = 13
	typeMX    = 15
	typeTXT   = 16
	typeAAAA  = 28
	typeSRV   = 33
)

// rotation says how a cached answer's records rotate between replies, as
// the ordinary path's resolver.Rotate turns them: the one run of A or AAAA
// records of one owner, or of SRV records of one priority, in the answer
// section. A run is rotated by moving whole records' bytes, which is only
// safe when no compression pointer in the message points into the run;
// planRotation checks that once, when the answer is cached.
type rotation struct {
	at, end uint16 // the run is wire[at:end]
	n       uint16 // records in the run; below 2: nothing rotates
	size    uint16 // the size of each record when all are equal, else 0
}

// apply writes into out, a copy of wire whose run it has not changed, the
// run turned by turn records.
func (r rotation) apply(out []byte, wire string, turn uint32) {
	k := int(turn % uint32(r.n))
	if k == 0 {
		return
	}
	at, end := int(r.at), int(r.end)
	split := at + k*int(r.size)
	if r.size == 0 {
		split = at
		for range k {
			split = skipRR(out, split)
		}
	}
	copy(out[at:], wire[split:end])
	copy(out[at+end-split:], wire[at:split])
}

// Turnable reports whether the fast path can turn the records of the
// packed answer wire in place (see planRotation): a Source may
// pack an answer without compression when it cannot.
func Turnable(wire []byte) bool {
	_, ok := planRotation(wire)
	return ok
}

// rotationOf returns the rotation of the packed answer wire and wire, or
// nil when the ordinary path must answer (see planRotation).
func rotationOf(wire []byte) (rotation, []byte) {
	r, ok := planRotation(wire)
	if !ok {
		return rotation{}, nil
	}
	return r, wire
}

// planRotation finds the run to rotate in a packed answer. ok is false
// when the answer cannot be served rotated: several runs, or a pointer
// into the run, or a record whose names it cannot read.
func planRotation(msg []byte) (r rotation, ok bool) {
	if len(msg) < headerLen || len(msg) > 0xFFFF {
		return r, false
	}
	counts := [3]int{int(binary.BigEndian.Uint16(msg[6:])), int(binary.BigEndian.Uint16(msg[8:])), int(binary.BigEndian.Uint16(msg[10:]))}
	off := skipName(msg, headerLen)
	if off < 0 {
		return r, false
	}
	off += 4
	starts := make([]int, 0, counts[0]+1)
	for range counts[0] {
		starts = append(starts, off)
		if off = skipRR(msg, off); off < 0 {
			return r, false
		}
	}
	starts = append(starts, off)
	if r, ok = findRun(msg, starts); !ok || r.n < 2 {
		return r, ok
	}
	return r, !pointsInto(msg, int(r.at), int(r.end), counts)
}

// findRun returns the one run of two or more rotatable records among the
// answer records beginning at starts (the last entry is the section's
// end).
func findRun(msg []byte, starts []int) (r rotation, ok bool) {
	for i := 0; i+1 < len(starts); {
		j := i + 1
		for j+1 < len(starts) && sameRun(msg, starts[i], starts[j]) {
			j++
		}
		if j-i > 1 && rotatableType(msg, starts[i]) {
			if r.n != 0 {
				return r, false
			}
			r = rotation{at: uint16(starts[i]), end: uint16(starts[j]), n: uint16(j - i), size: equalSize(starts[i : j+1])}
		}
		i = j
	}
	return r, true
}

// sameRun reports whether the records at x and y have the same owner
// bytes and type, and for SRV the same priority.
func sameRun(msg []byte, x, y int) bool {
	xo, yo := skipName(msg, x), skipName(msg, y)
	if string(msg[x:xo]) != string(msg[y:yo]) || string(msg[xo:xo+2]) != string(msg[yo:yo+2]) {
		return false
	}
	return binary.BigEndian.Uint16(msg[xo:]) != typeSRV || string(msg[xo+10:xo+12]) == string(msg[yo+10:yo+12])
}

func rotatableType(msg []byte, off int) bool {
	switch binary.BigEndian.Uint16(msg[skipName(msg, off):]) {
	case typeA, typeAAAA, typeSRV:
		return true
	}
	return false
}

// equalSize is the size of each record between consecutive starts when
// all are equal, else 0.
func equalSize(starts []int) uint16 {
	size := starts[1] - starts[0]
	for i := 2; i < len(starts); i++ {
		if starts[i]-starts[i-1] != size {
			return 0
		}
	}
	return uint16(size)
}

// pointsInto reports whether a compression pointer of any name in the
// message points into msg[lo:hi], or a record's names cannot be read.
func pointsInto(msg []byte, lo, hi int, counts [3]int) bool {
	if namePointsInto(msg, headerLen, lo, hi) {
		return true
	}
	off := skipName(msg, headerLen) + 4
	for range counts[0] + counts[1] + counts[2] {
		rdata := skipName(msg, off) + 10
		if rdata < 10 || rdata > len(msg) || namePointsInto(msg, off, lo, hi) {
			return true
		}
		names, ok := rdataNames(binary.BigEndian.Uint16(msg[rdata-10:]))
		if !ok {
			return true
		}
		for _, skip := range names {
			name := rdata + skip
			if skip < 0 { // right after the previous name
				name = skipName(msg, rdata)
			}
			if namePointsInto(msg, name, lo, hi) {
				return true
			}
		}
		off = rdata + int(binary.BigEndian.Uint16(msg[rdata-2:]))
	}
	return false
}

// rdataNames returns where the names of an rdata of rrtype begin: an
// offset into the rdata, or -1 for right after the previous name. ok is
// false for a type whose layout is not known here.
func rdataNames(rrtype uint16) (_ []int, ok bool) {
	switch rrtype {
	case typeA, typeAAAA, typeTXT, typeHINFO, typeOPT:
		return nil, true
	case typeNS, typeCNAME, typePTR:
		return []int{0}, true
	case typeMX:
		return []int{2}, true
	case typeSRV:
		return []int{6}, true
	case typeSOA:
		return []int{0, -1}, true
	}
	return nil, false
}

// namePointsInto reports whether reading the name at off follows a
// compression pointer to bytes within msg[lo:hi] (a name read where it is
// moves with it); an unreadable name counts as one.
func namePointsInto(msg []byte, off, lo, hi int) bool {
	jumped := false
	for hops := 0; off >= 0 && off < len(msg) && hops < 64; {
		n := int(msg[off])
		size := 1 + n // the bytes this step reads
		if n&0xC0 == 0xC0 {
			size = 2
		}
		if jumped && off < hi && off+size > lo {
			return true
		}
		switch {
		case n == 0:
			return false
		case n&0xC0 == 0xC0:
			if off+1 >= len(msg) {
				return true
			}
			off, hops, jumped = int(binary.BigEndian.Uint16(msg[off:])&0x3FFF), hops+1, true
		default:
			off += size
		}
	}
	return true
}
