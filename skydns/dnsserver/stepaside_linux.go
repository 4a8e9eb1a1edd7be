//go:build linux

package dnsserver

import (
	"errors"
	"net"
	"unsafe"

	"golang.org/x/sys/unix"
)

// udpSockets are a server's UDP sockets, acted on through their file
// descriptors.
type udpSockets []*net.UDPConn

func (u udpSockets) connect() error {
	return u.each(func(fd int) error {
		self, err := unix.Getsockname(fd)
		if err != nil {
			return err
		}
		return unix.Connect(fd, self)
	})
}

func (u udpSockets) disconnect() error {
	return u.each(func(fd int) error {
		unspec := unix.RawSockaddr{Family: unix.AF_UNSPEC}
		_, _, errno := unix.Syscall(unix.SYS_CONNECT, uintptr(fd), uintptr(unsafe.Pointer(&unspec)), unsafe.Sizeof(unspec))
		if errno != 0 {
			return errno
		}
		return nil
	})
}

func (u udpSockets) queued() (bool, error) {
	busy := false
	err := u.each(func(fd int) error {
		n, err := unix.IoctlGetInt(fd, unix.SIOCINQ) // the size of the next datagram, 0 for none
		busy = busy || n > 0
		return err
	})
	return busy, err
}

// each calls f with every socket's descriptor and joins the errors.
func (u udpSockets) each(f func(fd int) error) error {
	var errs []error
	for _, c := range u {
		rc, err := c.SyscallConn()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var ferr error
		if err := rc.Control(func(fd uintptr) { ferr = f(int(fd)) }); err != nil {
			ferr = err
		}
		errs = append(errs, ferr)
	}
	return errors.Join(errs...)
}
