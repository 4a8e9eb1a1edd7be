package fastpath

import (
	"net"
	"net/netip"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// cmsg builds one control message the way the kernel reports it.
func cmsg(level, typ int32, data []byte) []byte {
	b := make([]byte, unix.CmsgSpace(len(data)))
	h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
	h.Level, h.Type = level, typ
	h.SetLen(unix.CmsgLen(len(data)))
	copy(b[unix.CmsgLen(0):], data)
	return b
}

func TestReplyControlAnswersFromTheQuerysDestination(t *testing.T) {
	v4 := unix.Inet4Pktinfo{Ifindex: 7, Spec_dst: [4]byte{192, 0, 2, 1}, Addr: [4]byte{192, 0, 2, 53}}
	v6 := unix.Inet6Pktinfo{Addr: netip.MustParseAddr("2001:db8::53").As16(), Ifindex: 7}
	other := cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMP, make([]byte, 16))
	tests := []struct {
		name  string
		rcv   []byte
		level int32
		src   []byte
	}{
		{"IPv4: the source is the query's destination, no interface", cmsg(unix.IPPROTO_IP, unix.IP_PKTINFO,
			(*[unix.SizeofInet4Pktinfo]byte)(unsafe.Pointer(&v4))[:]), unix.IPPROTO_IP, v4.Addr[:]},
		{"IPv6: the source is the query's destination, no interface", cmsg(unix.IPPROTO_IPV6, unix.IPV6_PKTINFO,
			(*[unix.SizeofInet6Pktinfo]byte)(unsafe.Pointer(&v6))[:]), unix.IPPROTO_IPV6, v6.Addr[:]},
		{"another message first is skipped", append(other, cmsg(unix.IPPROTO_IP, unix.IP_PKTINFO,
			(*[unix.SizeofInet4Pktinfo]byte)(unsafe.Pointer(&v4))[:])...), unix.IPPROTO_IP, v4.Addr[:]},
		{"no packet info gives no control message", other, 0, nil},
		{"a truncated message gives none", cmsg(unix.IPPROTO_IP, unix.IP_PKTINFO, make([]byte, 12))[:20], 0, nil},
		{"nothing gives nothing", nil, 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := replyControl(make([]byte, oobSize), tc.rcv)
			if tc.src == nil {
				if len(out) != 0 {
					t.Fatalf("got %x, want nothing", out)
				}
				return
			}
			h := (*unix.Cmsghdr)(unsafe.Pointer(&out[0]))
			data := out[unix.CmsgLen(0):]
			var src []byte
			var ifindex uint32
			if tc.level == unix.IPPROTO_IP {
				pi := (*unix.Inet4Pktinfo)(unsafe.Pointer(&data[0]))
				src, ifindex = pi.Spec_dst[:], uint32(pi.Ifindex)
			} else {
				pi := (*unix.Inet6Pktinfo)(unsafe.Pointer(&data[0]))
				src, ifindex = pi.Addr[:], pi.Ifindex
			}
			if h.Level != tc.level || !net.IP(src).Equal(net.IP(tc.src)) || ifindex != 0 {
				t.Fatalf("got level %d source %v interface %d; want %d %v 0", h.Level, net.IP(src), ifindex, tc.level, net.IP(tc.src))
			}
		})
	}
}

func TestPacketInfoIsOnlyWantedOnUnspecifiedAddresses(t *testing.T) {
	conns, err := ListenUDP("127.0.0.1:0", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll(conns)
	if want, err := wantPacketInfo(conns[0]); want || err != nil {
		t.Fatalf("wantPacketInfo on 127.0.0.1 = %v, %v; want false", want, err)
	}
}
