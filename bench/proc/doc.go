// Package proc starts and stops the benchmark's server processes, pinned to
// a CPU with taskset, and reads their CPU time and resident memory from
// /proc.
package proc
