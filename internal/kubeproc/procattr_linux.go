package kubeproc

import "syscall"

// procAttr puts a child in its own process group and has the kernel kill it
// if its parent dies.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
