// Package exepages gives back the resident pages of the running program's
// own file that it mapped read-only: its code and read-only data.
//
// A Go program runs every package's init at start, and the kernel maps a
// file's pages around each one touched (fault-around), so a long-running
// server keeps nearly its whole binary resident though it runs a small
// part of it: 19 MiB of a 20 MiB skydns. Drop tells the kernel
// (madvise MADV_DONTNEED) that the read-only mappings of the executable
// are not needed; the pages stay in the page cache, and the ones the
// program runs again are mapped back on their next use (with the 64 KiB
// around each that the kernel maps at once). Mappings that can
// be written (data, heap, stacks) are never touched: dropping them would
// lose what was written. A debugger's breakpoints (its private copies of
// code pages) are dropped too.
package exepages
