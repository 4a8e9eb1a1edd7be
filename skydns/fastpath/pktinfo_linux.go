package fastpath

import (
	"net"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A socket bound to an unspecified address (0.0.0.0, ::) must answer from
// the address each query was sent to, or a multi-homed client sees the
// answer come from elsewhere. The kernel reports that address with every
// packet (IP_PKTINFO, IPV6_PKTINFO) and takes it back as the source of a
// reply, as miekg/dns's server does for such sockets.

// oobSize is the room for the control messages of one packet.
const oobSize = 64

// wantPacketInfo asks the kernel to report each packet's destination
// address on conn; it is only needed when conn is bound to an unspecified
// address.
func wantPacketInfo(conn *net.UDPConn) (bool, error) {
	if !conn.LocalAddr().(*net.UDPAddr).IP.IsUnspecified() {
		return false, nil
	}
	raw, err := conn.SyscallConn()
	if err != nil {
		return false, err
	}
	v6 := conn.LocalAddr().(*net.UDPAddr).IP.To4() == nil
	var opErr error
	err = raw.Control(func(fd uintptr) {
		opErr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_PKTINFO, 1)
		if v6 && opErr == nil {
			opErr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_RECVPKTINFO, 1)
		}
	})
	if err == nil {
		err = opErr
	}
	return err == nil, err
}

// replyControl writes into oob the control message that makes a reply
// leave from the destination address reported in rcv, and returns it;
// empty when rcv reports none.
func replyControl(oob, rcv []byte) []byte {
	for len(rcv) >= unix.SizeofCmsghdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&rcv[0]))
		n := int(h.Len)
		if n < unix.SizeofCmsghdr || n > len(rcv) {
			break
		}
		data := rcv[unix.CmsgLen(0):n]
		switch {
		case h.Level == unix.IPPROTO_IP && h.Type == unix.IP_PKTINFO && len(data) >= unix.SizeofInet4Pktinfo:
			in := (*unix.Inet4Pktinfo)(unsafe.Pointer(&data[0]))
			out := (*unix.Inet4Pktinfo)(controlData(oob, unix.IPPROTO_IP, unix.IP_PKTINFO, unix.SizeofInet4Pktinfo))
			*out = unix.Inet4Pktinfo{Spec_dst: in.Addr}
			return oob[:unix.CmsgSpace(unix.SizeofInet4Pktinfo)]
		case h.Level == unix.IPPROTO_IPV6 && h.Type == unix.IPV6_PKTINFO && len(data) >= unix.SizeofInet6Pktinfo:
			in := (*unix.Inet6Pktinfo)(unsafe.Pointer(&data[0]))
			out := (*unix.Inet6Pktinfo)(controlData(oob, unix.IPPROTO_IPV6, unix.IPV6_PKTINFO, unix.SizeofInet6Pktinfo))
			*out = unix.Inet6Pktinfo{Addr: in.Addr}
			return oob[:unix.CmsgSpace(unix.SizeofInet6Pktinfo)]
		}
		rcv = rcv[min(unix.CmsgSpace(n-unix.CmsgLen(0)), len(rcv)):]
	}
	return oob[:0]
}

// controlData writes a control message header for level and typ with
// size bytes of data at the start of oob, and returns the data's address.
func controlData(oob []byte, level, typ int32, size int) unsafe.Pointer {
	clear(oob[:unix.CmsgSpace(size)])
	h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
	h.Level, h.Type = level, typ
	h.SetLen(unix.CmsgLen(size))
	return unsafe.Pointer(&oob[unix.CmsgLen(0)])
}
