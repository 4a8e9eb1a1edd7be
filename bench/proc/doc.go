// Package proc reads the CPU time and resident memory of the benchmark's
// server processes from /proc, and pins a command to a CPU with taskset.
// internal/kubeproc starts, supervises and stops them.
package proc
