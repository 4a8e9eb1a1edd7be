//go:build !unix

package kubeproc

import "syscall"

// procAttr has nothing to add outside Unix.
func procAttr() *syscall.SysProcAttr {
	return nil
}
