package fastpath

import (
	"encoding/binary"
	"net"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"
)

// batchReader reads up to len(ms) queries with one recvmmsg(2) into the
// messages' buffers, as ipv4.PacketConn.ReadBatch does, but into sender
// addresses it owns, one per slot: ReadBatch allocates a net.UDPAddr and
// its IP for every packet, and at 100k queries a second that garbage is
// what the collector ran for. A slot's address is valid until the next
// read; a caller that keeps it copies it.
type batchReader struct {
	*mmsgs
	raw   syscall.RawConn
	addrs []net.UDPAddr
	ips   [][net.IPv6len]byte
}

func newBatchReader(conn *net.UDPConn, slots int) (*batchReader, error) {
	raw, err := conn.SyscallConn()
	if err != nil {
		return nil, err
	}
	return &batchReader{mmsgs: newMmsgs(unix.SYS_RECVMMSG, slots), raw: raw,
		addrs: make([]net.UDPAddr, slots), ips: make([][net.IPv6len]byte, slots)}, nil
}

// read fills N, NN, Flags and Addr of the first messages, each of which
// has one buffer, and returns how many it filled.
func (b *batchReader) read(ms []ipv4.Message) (int, error) {
	ms = ms[:min(len(ms), len(b.hdrs))]
	for i := range ms {
		b.prepare(i, ms[i].Buffers[0], ms[i].OOB, unix.SizeofSockaddrInet6)
	}
	got, err := b.run(len(ms), b.raw.Read)
	for i := range got {
		h := &b.hdrs[i]
		ms[i].N, ms[i].NN, ms[i].Flags = int(h.len), int(h.hdr.Controllen), int(h.hdr.Flags)
		ms[i].Addr = b.sender(i)
	}
	return got, err
}

// sender decodes slot i's address into the slot's net.UDPAddr; nil when
// it is of neither family.
func (b *batchReader) sender(i int) net.Addr {
	raw := (*[unix.SizeofSockaddrInet6]byte)(unsafe.Pointer(&b.names[i]))
	a := &b.addrs[i]
	a.Port, a.Zone = int(binary.BigEndian.Uint16(raw[2:4])), ""
	switch binary.NativeEndian.Uint16(raw[0:2]) {
	case unix.AF_INET:
		a.IP = append(b.ips[i][:0], raw[4:8]...)
	case unix.AF_INET6:
		a.IP = append(b.ips[i][:0], raw[8:24]...)
		if scope := binary.NativeEndian.Uint32(raw[24:28]); scope != 0 {
			a.Zone = strconv.FormatUint(uint64(scope), 10) // link-local only
		}
	default:
		return nil
	}
	return a
}
