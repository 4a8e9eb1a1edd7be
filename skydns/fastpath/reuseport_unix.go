//go:build unix

package fastpath

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// ReusePort, a net.ListenConfig Control function, sets SO_REUSEPORT on a socket before it is bound.
func ReusePort(_, _ string, c syscall.RawConn) error {
	var opErr error
	err := c.Control(func(fd uintptr) {
		opErr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
	})
	return errors.Join(err, opErr)
}
