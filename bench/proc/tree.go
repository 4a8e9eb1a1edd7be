package proc

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// TreeCPUTime is CPUTime of pid plus that of every live descendant (NSD
// answers queries in a child process it forked).
func TreeCPUTime(pid int) (time.Duration, error) {
	total, err := CPUTime(pid)
	if err != nil {
		return 0, err
	}
	kids, err := children(pid)
	if err != nil {
		return 0, err
	}
	for _, kid := range kids {
		t, err := TreeCPUTime(kid)
		if err != nil && !os.IsNotExist(err) { // a child may exit meanwhile
			return 0, err
		}
		total += t
	}
	return total, nil
}

// children are the process ids of pid's children, from each of its
// threads' /proc/PID/task/TID/children.
func children(pid int) ([]int, error) {
	files, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	if err != nil {
		return nil, err
	}
	var out []int
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the thread ended
		}
		for _, field := range strings.Fields(string(b)) {
			n, err := strconv.Atoi(field)
			if err != nil {
				return nil, fmt.Errorf("%s: %q is not a process id", f, field)
			}
			out = append(out, n)
		}
	}
	return out, nil
}
