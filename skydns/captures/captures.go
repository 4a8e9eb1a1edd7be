// Package captures builds DNS queries byte for byte as real clients send
// them (dig, glibc, musl, dnsperf) and hostile variations of them: the
// seeds of the server's fuzz targets and the material of the hostile
// traffic test. It has no I/O.
package captures

import (
	"encoding/binary"
	"strings"

	"github.com/miekg/dns"
)

// wireQuery is a query in wire format under construction.
type wireQuery []byte

// newWireQuery is a header: id, flags (QR|opcode|AA|TC|RD|RA|Z|AD|CD|rcode
// as on the wire) and the four counts.
func newWireQuery(id, flags, qd, an, ns, ar uint16) wireQuery {
	var b []byte
	for _, v := range []uint16{id, flags, qd, an, ns, ar} {
		b = binary.BigEndian.AppendUint16(b, v)
	}
	return b
}

// name appends name's labels, uncompressed, as clients write them.
func (q wireQuery) name(name string) wireQuery {
	for _, label := range strings.Split(strings.TrimSuffix(name, "."), ".") {
		if label != "" {
			q = append(append(q, byte(len(label))), label...)
		}
	}
	return append(q, 0)
}

// question appends name, type and class.
func (q wireQuery) question(name string, qtype, qclass uint16) wireQuery {
	q = q.name(name)
	q = binary.BigEndian.AppendUint16(q, qtype)
	return binary.BigEndian.AppendUint16(q, qclass)
}

// opt appends an OPT record: the root name, the requester's UDP size, the
// extended rcode, version and flags (ttl), and options as code, data.
func (q wireQuery) opt(size uint16, ttl uint32, options ...ednsOption) wireQuery {
	var rdata []byte
	for _, o := range options {
		rdata = binary.BigEndian.AppendUint16(rdata, o.code)
		rdata = binary.BigEndian.AppendUint16(rdata, uint16(len(o.data)))
		rdata = append(rdata, o.data...)
	}
	q = append(q, 0)
	q = binary.BigEndian.AppendUint16(q, dns.TypeOPT)
	q = binary.BigEndian.AppendUint16(q, size)
	q = binary.BigEndian.AppendUint32(q, ttl)
	q = binary.BigEndian.AppendUint16(q, uint16(len(rdata)))
	return append(q, rdata...)
}

type ednsOption struct {
	code uint16
	data []byte
}

// Header flags as clients set them.
const (
	flagRD = 0x0100
	flagAD = 0x0020
	flagCD = 0x0010
	flagQR = 0x8000
	flagTC = 0x0200
	ednsDO = 0x8000 // in the OPT record's TTL
)

// Dig is BIND 9.18's dig: RD and AD set, EDNS with a 1232-byte
// buffer and an 8-byte client cookie.
func Dig(id uint16, name string, qtype uint16) []byte {
	cookie := []byte{0x5e, 0x1f, 0x27, 0x3a, 0x90, 0x0b, 0xc4, 0x71}
	return newWireQuery(id, flagRD|flagAD, 1, 0, 0, 1).question(name, qtype, dns.ClassINET).
		opt(1232, 0, ednsOption{dns.EDNS0COOKIE, cookie})
}

// GlibcPair is glibc's getaddrinfo: an A and an AAAA query with their own
// IDs, RD set, no EDNS (with "options edns0" in resolv.conf: a 1200-byte
// buffer and no options), sent together.
func GlibcPair(id uint16, name string, edns bool) [][]byte {
	var pair [][]byte
	for i, qtype := range []uint16{dns.TypeA, dns.TypeAAAA} {
		ar := uint16(0)
		if edns {
			ar = 1
		}
		q := newWireQuery(id+uint16(i)*0x2f1d, flagRD, 1, 0, 0, ar).question(name, qtype, dns.ClassINET)
		if edns {
			q = q.opt(1200, 0)
		}
		pair = append(pair, q)
	}
	return pair
}

// MuslPair is musl's getaddrinfo: the A and AAAA queries sent in
// parallel, RD set, no EDNS, the AAAA's ID the A's with its first byte
// incremented.
func MuslPair(id uint16, name string) [][]byte {
	a := newWireQuery(id, flagRD, 1, 0, 0, 0).question(name, dns.TypeA, dns.ClassINET)
	aaaa := newWireQuery(id+0x100, flagRD, 1, 0, 0, 0).question(name, dns.TypeAAAA, dns.ClassINET)
	return [][]byte{a, aaaa}
}

// Dnsperf is dnsperf's: IDs counting from 0, RD set, and with -e an
// OPT record with a 4096-byte buffer (-D adds DO).
func Dnsperf(seq uint16, name string, qtype uint16, edns, do bool) []byte {
	if !edns && !do {
		return newWireQuery(seq, flagRD, 1, 0, 0, 0).question(name, qtype, dns.ClassINET)
	}
	ttl := uint32(0)
	if do {
		ttl = ednsDO
	}
	return newWireQuery(seq, flagRD, 1, 0, 0, 1).question(name, qtype, dns.ClassINET).opt(4096, ttl)
}

// Clients are the real clients' queries for names of a cluster:
// a service, a pod's search list expansions (ndots:5), SRV, PTR and a
// name outside the zones.
func Clients() [][]byte {
	svc := "web.default.svc.cluster.local."
	var out [][]byte
	out = append(out, Dig(0x3c4f, svc, dns.TypeA), Dig(0x91aa, "_http._tcp."+svc, dns.TypeSRV),
		Dig(0x0001, "1.0.96.10.in-addr.arpa.", dns.TypePTR), Dig(0x7777, "example.com.", dns.TypeA))
	for _, search := range []string{"web.default.svc.cluster.local.", "web.svc.cluster.local.", "web.cluster.local.", "web."} {
		out = append(out, GlibcPair(0xa1b2, search, false)...)
	}
	out = append(out, GlibcPair(0x1234, svc, true)...)
	out = append(out, MuslPair(0x4e20, "web.default.svc.cluster.local.default.svc.cluster.local.")...)
	out = append(out, MuslPair(0x4f20, svc)...)
	out = append(out, Dnsperf(0, svc, dns.TypeA, false, false), Dnsperf(1, svc, dns.TypeAAAA, true, false),
		Dnsperf(2, "big.default.svc.cluster.local.", dns.TypeA, true, true), Dnsperf(3, "nope.default.svc.cluster.local.", dns.TypeA, false, false))
	return out
}

// Hostile are what no well-behaved client sends: EDNS options of
// every kind, compression pointers (backwards, forwards, looping), bad
// label types, wrong counts, other opcodes and classes, responses, and
// truncated packets.
func Hostile() [][]byte {
	svc := "web.default.svc.cluster.local."
	plain := func(id uint16) wireQuery { return newWireQuery(id, flagRD, 1, 0, 0, 0) }
	withOpt := func(id uint16) wireQuery {
		return newWireQuery(id, flagRD, 1, 0, 0, 1).question(svc, dns.TypeA, dns.ClassINET)
	}
	ecs := []byte{0, 1, 24, 0, 10, 96, 0}
	out := [][]byte{
		withOpt(1).opt(512, 0, ednsOption{dns.EDNS0NSID, nil}),
		withOpt(2).opt(1232, 0, ednsOption{dns.EDNS0SUBNET, ecs}),
		withOpt(3).opt(4096, 0, ednsOption{dns.EDNS0PADDING, make([]byte, 100)}),
		withOpt(4).opt(65535, ednsDO, ednsOption{dns.EDNS0TCPKEEPALIVE, nil}, ednsOption{65001, []byte("x")}),
		withOpt(5).opt(1232, 1<<16, ednsOption{dns.EDNS0COOKIE, make([]byte, 8)}), // EDNS version 1
		withOpt(6).opt(0, 0), // a 0-byte buffer
		withOpt(7).opt(1232, 0, ednsOption{dns.EDNS0COOKIE, make([]byte, 3)}), // a cookie too short
		withOpt(8).opt(1232, 0, ednsOption{10, make([]byte, 40)}),             // a cookie too long
		append(withOpt(9).opt(1232, 0), 0, 0, 41, 4, 208, 0, 0, 0, 0, 0, 0),   // a second OPT
		plain(10).question(svc, dns.TypeA, dns.ClassCHAOS),
		plain(11).question("version.bind.", dns.TypeTXT, dns.ClassCHAOS),
		plain(12).question(svc, dns.TypeANY, dns.ClassANY),
		plain(13).question("cluster.local.", dns.TypeAXFR, dns.ClassINET),
		plain(14).question(svc, dns.TypeOPT, dns.ClassINET),
		newWireQuery(15, flagRD|flagTC|flagCD, 1, 0, 0, 0).question(svc, dns.TypeA, dns.ClassINET),
		newWireQuery(16, flagQR|flagRD, 1, 1, 0, 0).question(svc, dns.TypeA, dns.ClassINET),        // a response
		newWireQuery(17, 4<<11, 1, 0, 0, 0).question("cluster.local.", dns.TypeSOA, dns.ClassINET), // NOTIFY
		newWireQuery(18, 5<<11, 1, 0, 0, 0).question("cluster.local.", dns.TypeSOA, dns.ClassINET), // UPDATE
		newWireQuery(19, 2<<11, 0, 0, 0, 0),                                                        // STATUS
		newWireQuery(20, flagRD, 2, 0, 0, 0).question(svc, dns.TypeA, dns.ClassINET).question(svc, dns.TypeAAAA, dns.ClassINET),
		newWireQuery(21, flagRD, 1, 0, 0, 0), // the questionless query
		newWireQuery(22, flagRD, 0, 0, 0, 0),
		newWireQuery(23, flagRD, 1, 0xffff, 0xffff, 0xffff).question(svc, dns.TypeA, dns.ClassINET),
		plain(24).question(svc, dns.TypeA, dns.ClassINET)[:20],                        // cut inside the name
		plain(25).question(svc, dns.TypeA, dns.ClassINET)[:len(plain(0).name(svc))+1], // cut in the type
		append(plain(26).question(svc, dns.TypeA, dns.ClassINET), "trailing bytes"...),
		append(plain(27), 0xc0, 0x0c, 0, 1, 0, 1),                                      // a name pointing at itself
		append(plain(28), 0xc0, 0x0e, 0xc0, 0x0c, 0, 1, 0, 1),                          // two pointers pointing at each other
		append(plain(29), 0xc0, 0x00, 0, 1, 0, 1),                                      // a pointer into the header
		append(plain(30), 3, 'w', 'e', 'b', 0xc0, 0x30, 0, 1, 0, 1),                    // a pointer past the end
		append(plain(31), 0x40, 'x', 0, 0, 1, 0, 1),                                    // the extended label type
		append(plain(32), 0x80, 'x', 0, 0, 1, 0, 1),                                    // the reserved label type
		append(plain(33), 3, 'a', 0, '.', 2, 0xff, 0xfe, 0, 0, 1, 0, 1),                // a NUL, a dot and high bytes in labels
		plain(34).question(strings.Repeat("a.", 127), dns.TypeA, dns.ClassINET),        // a 255-byte name
		plain(35).question(strings.Repeat("abcdefghi.", 30), dns.TypeA, dns.ClassINET), // a name too long
		plain(36).question("*.default.svc.cluster.local.", dns.TypeSRV, dns.ClassINET),
		plain(37).question("cluster.local.", 0, dns.ClassINET),
		plain(38).question("cluster.local.", dns.TypeA, 0),
		{0x00}, {}, {0x00, 0x09, 0x00},
	}
	// A forward pointer: the question's name is the additional record's.
	fwd := newWireQuery(39, flagRD, 1, 0, 0, 1)
	fwd = append(fwd, 0xc0, 18, 0, 1, 0, 1)
	fwd = append(fwd, plain(0).name(svc)[12:]...)
	return append(out, append(fwd, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 10, 0, 0, 1))
}

// TCPFrame prefixes msg with its length, as DNS over TCP does.
func TCPFrame(msg []byte) []byte {
	return append(binary.BigEndian.AppendUint16(nil, uint16(len(msg))), msg...)
}

// TCPStreams are streams as TCP clients send them, and lying ones: a
// pair in one write, a length longer or shorter than its message, empty
// and tiny frames, a frame cut short.
func TCPStreams() [][]byte {
	svc := "web.default.svc.cluster.local."
	pair := GlibcPair(0x5150, svc, false)
	dig := Dig(0x2222, svc, dns.TypeA)
	big := Dnsperf(7, "big.default.svc.cluster.local.", dns.TypeA, false, false)
	longer := append(binary.BigEndian.AppendUint16(nil, uint16(len(dig)+10)), dig...)
	shorter := append(binary.BigEndian.AppendUint16(nil, uint16(len(dig)-5)), dig...)
	return [][]byte{
		TCPFrame(dig),
		append(TCPFrame(pair[0]), TCPFrame(pair[1])...),
		append(append(TCPFrame(big), TCPFrame(dig)...), TCPFrame(dig)[:9]...),
		longer, shorter,
		append(append([]byte{0, 0}, TCPFrame(dig)...), 0, 1, 0xff),
		append(TCPFrame(newWireQuery(3, flagRD, 1, 0, 0, 0)), TCPFrame(dig)...),
		append(TCPFrame(newWireQuery(4, flagQR, 1, 0, 0, 0).question(svc, dns.TypeA, dns.ClassINET)), TCPFrame(dig)...),
		{0xff, 0xff}, {0}, {},
	}
}
