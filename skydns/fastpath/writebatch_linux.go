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

// batchWriter writes up to len(ms) answers with one sendmmsg(2), as
// ipv4.PacketConn.WriteBatch does, but into headers and destination
// addresses it owns, and without the scheduler's system-call bookkeeping:
// the socket is non-blocking, so the call never waits, and a P handed off
// during a long batch (the runtime's monitor takes it from a call that
// outlasts its 20 µs tick and wakes another thread to run it) costs two
// thread wake-ups per batch on a busy server.
type batchWriter struct {
	raw   syscall.RawConn
	hdrs  []mmsghdr
	iovs  []unix.Iovec
	names []unix.RawSockaddrInet6 // room for either family

	send  func(fd uintptr) bool // w.sendmmsg, made once
	count int                   // messages offered to sendmmsg
	sent  int                   // messages it sent
	errno syscall.Errno         // its error
}

func newBatchWriter(conn *net.UDPConn, slots int) (*batchWriter, error) {
	raw, err := conn.SyscallConn()
	if err != nil {
		return nil, err
	}
	w := &batchWriter{raw: raw, hdrs: make([]mmsghdr, slots), iovs: make([]unix.Iovec, slots), names: make([]unix.RawSockaddrInet6, slots)}
	w.send = w.sendmmsg
	return w, nil
}

// write sends the first messages, each with one buffer, an Addr of type
// *net.UDPAddr and optional OOB, and returns how many the kernel took.
func (w *batchWriter) write(ms []ipv4.Message) (int, error) {
	ms = ms[:min(len(ms), len(w.hdrs))]
	for i := range ms {
		w.prepare(i, &ms[i])
	}
	w.count = len(ms)
	if err := w.raw.Write(w.send); err != nil {
		return 0, err
	}
	if w.errno != 0 {
		return 0, os.NewSyscallError("sendmmsg", w.errno)
	}
	return w.sent, nil
}

// sendmmsg makes one non-blocking call; false (no room in the socket's
// buffer) makes the runtime wait until it is writable and call again.
func (w *batchWriter) sendmmsg(fd uintptr) bool {
	r, _, e := unix.RawSyscall6(unix.SYS_SENDMMSG, fd, uintptr(unsafe.Pointer(&w.hdrs[0])), uintptr(w.count), 0, 0, 0)
	if e == unix.EAGAIN {
		return false
	}
	w.sent, w.errno = int(r), e
	return true
}

// prepare points slot i's header at m's buffer, control data and
// destination.
func (w *batchWriter) prepare(i int, m *ipv4.Message) {
	buf := m.Buffers[0]
	w.iovs[i].Base = unsafe.SliceData(buf)
	w.iovs[i].SetLen(len(buf))
	h := &w.hdrs[i].hdr
	*h = unix.Msghdr{Iov: &w.iovs[i]}
	h.SetIovlen(1)
	if n := w.destination(i, m.Addr); n > 0 {
		h.Name, h.Namelen = (*byte)(unsafe.Pointer(&w.names[i])), n
	}
	if len(m.OOB) > 0 {
		h.Control = &m.OOB[0]
		h.SetControllen(len(m.OOB))
	}
}

// destination writes addr into slot i's sockaddr, as x/net marshals it
// (an IPv4 address, mapped or not, as AF_INET: Linux sends those on an
// IPv6 socket too), and returns its length; 0 for no address.
func (w *batchWriter) destination(i int, addr net.Addr) uint32 {
	a, ok := addr.(*net.UDPAddr)
	if !ok {
		return 0
	}
	raw := (*[unix.SizeofSockaddrInet6]byte)(unsafe.Pointer(&w.names[i]))
	binary.BigEndian.PutUint16(raw[2:4], uint16(a.Port))
	if ip4 := a.IP.To4(); ip4 != nil {
		binary.NativeEndian.PutUint16(raw[0:2], unix.AF_INET)
		copy(raw[4:8], ip4)
		return unix.SizeofSockaddrInet4
	}
	if len(a.IP) != net.IPv6len {
		return 0
	}
	binary.NativeEndian.PutUint16(raw[0:2], unix.AF_INET6)
	clear(raw[4:8]) // flow info
	copy(raw[8:24], a.IP)
	binary.NativeEndian.PutUint32(raw[24:28], scopeID(a.Zone))
	return unix.SizeofSockaddrInet6
}

// scopeID is the interface index of an IPv6 zone: the batch reader writes
// it in decimal; a name is looked up.
func scopeID(zone string) uint32 {
	if zone == "" {
		return 0
	}
	if n, err := strconv.ParseUint(zone, 10, 32); err == nil {
		return uint32(n)
	}
	if ifi, err := net.InterfaceByName(zone); err == nil {
		return uint32(ifi.Index)
	}
	return 0
}
