package proc

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of utime and stime in /proc/PID/stat: USER_HZ,
// which Linux fixes at 100 for user space.
const clockTick = 10 * time.Millisecond

// CPUTime is the user plus system CPU time the process pid and all its
// threads have used so far, with that of its children it has waited for
// (dnsmasq serves each TCP connection in a child process).
func CPUTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	ticks, err := parseStat(string(b))
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return time.Duration(ticks) * clockTick, nil
}

// parseStat returns utime+stime+cutime+cstime from the text of
// /proc/PID/stat. The command name in parentheses may hold spaces and
// parentheses, so fields are counted after the last ')'.
func parseStat(s string) (uint64, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("no command name in %q", s)
	}
	fields := strings.Fields(s[i+1:])
	// fields[0] is field 3 (state); utime, stime, cutime and cstime are
	// fields 14 to 17.
	if len(fields) < 15 {
		return 0, fmt.Errorf("%d fields after the command name, want at least 15", len(fields))
	}
	var sum uint64
	for _, f := range fields[11:15] {
		n, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("CPU time %q is not a number", f)
		}
		sum += n
	}
	return sum, nil
}

// Memory is a process's resident memory, in bytes.
type Memory struct {
	RSS  int64 // resident now (VmRSS)
	Peak int64 // the most it was resident (VmHWM)
}

// ReadMemory reads the resident memory of the process pid.
func ReadMemory(pid int) (Memory, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Memory{}, err
	}
	defer f.Close()
	m, err := parseStatus(f)
	if err != nil {
		return Memory{}, fmt.Errorf("/proc/%d/status: %w", pid, err)
	}
	return m, nil
}

// parseStatus reads VmRSS and VmHWM ("VmRSS:	  1234 kB") from the text
// of /proc/PID/status.
func parseStatus(r io.Reader) (Memory, error) {
	var m Memory
	var seen int
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if !ok || (key != "VmRSS" && key != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		if err != nil {
			return Memory{}, fmt.Errorf("%s: %w", key, err)
		}
		if key == "VmRSS" {
			m.RSS = kb << 10
		} else {
			m.Peak = kb << 10
		}
		seen++
	}
	if seen != 2 {
		return Memory{}, fmt.Errorf("no VmRSS and VmHWM lines (a kernel thread, or exited)")
	}
	return m, sc.Err()
}
