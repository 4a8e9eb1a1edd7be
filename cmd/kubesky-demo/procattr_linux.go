package main

import "syscall"

// childProcAttr puts a child in its own process group (a terminal's Ctrl-C
// reaches only the demo, which stops the children in order) and has the
// kernel kill it if the demo dies.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
