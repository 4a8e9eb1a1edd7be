//go:build !linux

package exepages

// Drop does nothing outside Linux.
func Drop() (int64, error) { return 0, nil }
