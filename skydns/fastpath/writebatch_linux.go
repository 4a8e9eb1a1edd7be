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

// batchWriter writes up to len(ms) answers with one sendmmsg(2), as
// ipv4.PacketConn.WriteBatch does, but through headers and destination
// addresses it owns, as a raw call (see mmsgs).
type batchWriter struct {
	*mmsgs
	raw syscall.RawConn
}

func newBatchWriter(conn *net.UDPConn, slots int) (*batchWriter, error) {
	raw, err := conn.SyscallConn()
	if err != nil {
		return nil, err
	}
	return &batchWriter{mmsgs: newMmsgs(unix.SYS_SENDMMSG, slots), raw: raw}, nil
}

// write sends the first messages, each with one buffer, an Addr of type
// *net.UDPAddr and optional OOB, and returns how many the kernel took.
func (w *batchWriter) write(ms []ipv4.Message) (int, error) {
	ms = ms[:min(len(ms), len(w.hdrs))]
	for i := range ms {
		w.prepare(i, ms[i].Buffers[0], ms[i].OOB, w.destination(i, ms[i].Addr))
	}
	return w.run(len(ms), w.raw.Write)
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
