//go:build unix && !linux

package kubeproc

import "syscall"

// procAttr puts a child in its own process group.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
