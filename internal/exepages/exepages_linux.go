package exepages

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Mapping is one read-only mapping of the executable, from /proc/self/maps.
type Mapping struct {
	Start, End uintptr
}

// Drop advises the kernel that the executable's read-only mappings are
// not needed (MADV_DONTNEED) and returns how many bytes they span.
func Drop() (int64, error) {
	maps, err := ReadOnly()
	if err != nil {
		return 0, err
	}
	var total int64
	for _, m := range maps {
		if err := madvise(m, unix.MADV_DONTNEED); err != nil {
			return total, err
		}
		total += int64(m.End - m.Start)
	}
	return total, nil
}

// madvise gives advice on m's range. unix.Madvise takes a slice; the
// range is an address from /proc/self/maps, so the system call gets it as
// numbers.
func madvise(m Mapping, advice uintptr) error {
	if _, _, errno := unix.Syscall(unix.SYS_MADVISE, m.Start, m.End-m.Start, advice); errno != 0 {
		return fmt.Errorf("madvise(%#x-%#x, %d): %w", m.Start, m.End, advice, errno)
	}
	return nil
}

// ReadOnly lists the running executable's read-only mappings.
func ReadOnly() ([]Mapping, error) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return nil, err
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Mapping
	s := bufio.NewScanner(f)
	for s.Scan() {
		if m, ok := parseLine(s.Text(), exe); ok {
			out = append(out, m)
		}
	}
	return out, s.Err()
}

// parseLine reads one /proc/PID/maps line ("start-end perms offset dev
// inode path") and reports whether it maps exe without write permission.
func parseLine(line, exe string) (Mapping, bool) {
	fields := strings.Fields(line)
	if len(fields) < 6 || strings.Join(fields[5:], " ") != exe || len(fields[1]) < 2 || fields[1][1] != '-' {
		return Mapping{}, false
	}
	start, end, ok := strings.Cut(fields[0], "-")
	if !ok {
		return Mapping{}, false
	}
	s, err1 := strconv.ParseUint(start, 16, 64)
	e, err2 := strconv.ParseUint(end, 16, 64)
	if err1 != nil || err2 != nil || e <= s {
		return Mapping{}, false
	}
	return Mapping{Start: uintptr(s), End: uintptr(e)}, true
}

// Resident sums the resident bytes of process pid's mappings of the file
// exe (an absolute path) by their permissions, from /proc/PID/smaps:
// "r-xp" is code, "r--p" read-only data, "rw-p" data.
func Resident(pid int, exe string) (map[string]int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]int64{}
	perms := "" // of the mapping whose lines follow, if it maps exe
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		switch {
		case len(fields) == 0:
		case !strings.HasSuffix(fields[0], ":"): // a mapping's header line
			perms = ""
			if len(fields) >= 6 && strings.Join(fields[5:], " ") == exe {
				perms = fields[1]
			}
		case fields[0] == "Rss:" && perms != "" && len(fields) == 3:
			if n, err := strconv.ParseInt(fields[1], 10, 64); err == nil {
				out[perms] += n << 10
			}
		}
	}
	return out, s.Err()
}
