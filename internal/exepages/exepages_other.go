//go:build !linux

package exepages

import "errors"

// Drop does nothing outside Linux.
func Drop() (int64, error) { return 0, nil }

// Resident needs /proc/PID/smaps: outside Linux it fails.
func Resident(int, string) (map[string]int64, error) {
	return nil, errors.New("exepages: resident pages are read from /proc, which this system lacks")
}
