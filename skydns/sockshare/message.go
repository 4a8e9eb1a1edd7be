package sockshare

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// send writes one message to c: hello and the count of conns, with their
// descriptors attached (SCM_RIGHTS).
func send(c *net.UnixConn, conns []*net.UDPConn) error {
	fds := make([]int, 0, len(conns))
	for _, conn := range conns {
		rc, err := conn.SyscallConn()
		if err != nil {
			return err
		}
		if err := rc.Control(func(fd uintptr) { fds = append(fds, int(fd)) }); err != nil {
			return err
		}
	}
	// The descriptors stay valid while conns are open: the Sharer's
	// owner closes them only after Close.
	_, _, err := c.WriteMsgUnix([]byte(hello+" "+strconv.Itoa(len(fds))), unix.UnixRights(fds...), nil)
	return err
}

// receive reads one message from c and returns the UDP sockets it
// carries. A message that is not the protocol's, or whose descriptors are
// not as many as it says or not UDP sockets, is an error, and every
// descriptor it carried is closed.
func receive(c *net.UnixConn) ([]*net.UDPConn, error) {
	buf := make([]byte, 64)
	oob := make([]byte, unix.CmsgSpace(maxSockets*4))
	n, oobn, flags, _, err := c.ReadMsgUnix(buf, oob)
	if err != nil {
		return nil, err
	}
	fds, err := rights(oob[:oobn])
	if err != nil {
		return nil, err
	}
	if err := check(string(buf[:n]), flags, fds); err != nil {
		closeFDs(fds)
		return nil, err
	}
	return udpConns(fds)
}

// rights are the descriptors attached to a message.
func rights(oob []byte) ([]int, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, fmt.Errorf("the attached control data: %w", err)
	}
	var fds []int
	for _, m := range msgs {
		got, err := unix.ParseUnixRights(&m)
		if err != nil {
			continue // not SCM_RIGHTS
		}
		fds = append(fds, got...)
	}
	return fds, nil
}

// check validates a message's text and its descriptors.
func check(text string, flags int, fds []int) error {
	count, ok := strings.CutPrefix(text, hello+" ")
	want, err := strconv.Atoi(count)
	switch {
	case !ok || err != nil:
		return fmt.Errorf("%q is not a %s message", text, hello)
	case flags&unix.MSG_CTRUNC != 0:
		return fmt.Errorf("more than %d descriptors attached", maxSockets)
	case want != len(fds):
		return fmt.Errorf("the message names %d sockets and carries %d", want, len(fds))
	}
	for _, fd := range fds {
		if err := checkUDP(fd); err != nil {
			return err
		}
	}
	return nil
}

// checkUDP reports whether fd is an IPv4 or IPv6 datagram socket.
func checkUDP(fd int) error {
	typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil {
		return fmt.Errorf("descriptor %d is not a socket: %w", fd, err)
	}
	domain, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil {
		return fmt.Errorf("descriptor %d: %w", fd, err)
	}
	if typ != unix.SOCK_DGRAM || (domain != unix.AF_INET && domain != unix.AF_INET6) {
		return fmt.Errorf("descriptor %d is not a UDP socket", fd)
	}
	return nil
}

// udpConns wraps checked descriptors; each is owned by its *net.UDPConn.
func udpConns(fds []int) ([]*net.UDPConn, error) {
	var conns []*net.UDPConn
	var errs []error
	for _, fd := range fds {
		f := os.NewFile(uintptr(fd), "peer-udp")
		pc, err := net.FilePacketConn(f) // a copy of the descriptor
		f.Close()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		conns = append(conns, pc.(*net.UDPConn))
	}
	if err := errors.Join(errs...); err != nil {
		closeAll(conns)
		return nil, fmt.Errorf("a peer's sockets: %w", err)
	}
	return conns, nil
}

func closeFDs(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}
