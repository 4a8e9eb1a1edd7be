package harness

import "syscall"

// sysProcAttr makes the kernel kill a child when the test binary dies, so an
// interrupted `go test` leaves no servers behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
