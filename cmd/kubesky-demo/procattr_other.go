//go:build unix && !linux

package main

import "syscall"

// childProcAttr puts a child in its own process group, so a terminal's
// Ctrl-C reaches only the demo.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
