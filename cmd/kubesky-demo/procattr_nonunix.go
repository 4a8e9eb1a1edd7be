//go:build !unix

package main

import "syscall"

// childProcAttr has nothing to add outside Unix.
func childProcAttr() *syscall.SysProcAttr {
	return nil
}
