//go:build !linux

package harness

import "syscall"

// sysProcAttr has nothing to add outside Linux.
func sysProcAttr() *syscall.SysProcAttr {
	return nil
}
