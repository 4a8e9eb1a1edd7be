//go:build !unix

package fastpath

import (
	"errors"
	"syscall"
)

// ReusePort fails: sharing a port between sockets needs SO_REUSEPORT.
func ReusePort(_, _ string, _ syscall.RawConn) error {
	return errors.New("several UDP sockets on one port need SO_REUSEPORT (a Unix system)")
}
