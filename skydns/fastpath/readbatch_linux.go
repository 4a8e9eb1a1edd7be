package fastpath

import (
	"encoding/binary"
	"net"
	"os"
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
	raw   syscall.RawConn
	hdrs  []mmsghdr
	iovs  []unix.Iovec
	names []unix.RawSockaddrInet6 // room for either family
	addrs []net.UDPAddr
	ips   [][net.IPv6len]byte

	recv  func(fd uintptr) bool // b.recvmmsg, made once: a closure per call would be garbage
	offer int                   // slots offered to recvmmsg
	got   int                   // messages it returned
	errno syscall.Errno         // its error
}

// mmsghdr is struct mmsghdr of recvmmsg(2); Go pads it as C does.
type mmsghdr struct {
	hdr unix.Msghdr
	len uint32
}

func newBatchReader(conn *net.UDPConn, slots int) (*batchReader, error) {
	raw, err := conn.SyscallConn()
	if err != nil {
		return nil, err
	}
	b := &batchReader{raw: raw, hdrs: make([]mmsghdr, slots), iovs: make([]unix.Iovec, slots),
		names: make([]unix.RawSockaddrInet6, slots), addrs: make([]net.UDPAddr, slots), ips: make([][net.IPv6len]byte, slots)}
	b.recv = b.recvmmsg
	return b, nil
}

// read fills N, NN, Flags and Addr of the first messages, each of which
// has one buffer, and returns how many it filled.
func (b *batchReader) read(ms []ipv4.Message) (int, error) {
	ms = ms[:min(len(ms), len(b.hdrs))]
	for i := range ms {
		b.prepare(i, &ms[i])
	}
	b.offer = len(ms)
	if err := b.raw.Read(b.recv); err != nil {
		return 0, err
	}
	if b.errno != 0 {
		return 0, os.NewSyscallError("recvmmsg", b.errno)
	}
	for i := range b.got {
		h := &b.hdrs[i]
		ms[i].N, ms[i].NN, ms[i].Flags = int(h.len), int(h.hdr.Controllen), int(h.hdr.Flags)
		ms[i].Addr = b.sender(i)
	}
	return b.got, nil
}

// recvmmsg makes one non-blocking call; false (nothing to read yet) makes
// the runtime wait until the socket is readable and call again. The call
// cannot block, so it is made raw, as batchWriter's is: without the
// scheduler's system-call state the runtime does not hand the goroutine's
// P to another thread while the kernel copies a batch.
func (b *batchReader) recvmmsg(fd uintptr) bool {
	r, _, e := unix.RawSyscall6(unix.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&b.hdrs[0])), uintptr(b.offer), 0, 0, 0)
	if e == unix.EAGAIN {
		return false
	}
	b.got, b.errno = int(r), e
	return true
}

// prepare points slot i's header at m's buffer and control space and at
// the slot's address.
func (b *batchReader) prepare(i int, m *ipv4.Message) {
	buf := m.Buffers[0]
	b.iovs[i].Base = &buf[0]
	b.iovs[i].SetLen(len(buf))
	h := &b.hdrs[i].hdr
	*h = unix.Msghdr{Name: (*byte)(unsafe.Pointer(&b.names[i])), Namelen: unix.SizeofSockaddrInet6, Iov: &b.iovs[i]}
	h.SetIovlen(1)
	if len(m.OOB) > 0 {
		h.Control = &m.OOB[0]
		h.SetControllen(len(m.OOB))
	}
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
