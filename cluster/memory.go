package cluster

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// MemoryReport is the cluster's resident memory in MB: each program that
// runs in its namespaces (the control plane, the nodes' daemons, the
// containerd shims), and each node's pods (the total_rss of its memory
// cgroup).
type MemoryReport struct {
	Programs map[string]int64 // by command name, summed over processes
	Pods     map[string]int64 // by node name
}

// Total is the sum of every figure.
func (m MemoryReport) Total() int64 {
	var total int64
	for _, mb := range m.Programs {
		total += mb
	}
	for _, mb := range m.Pods {
		total += mb
	}
	return total
}

// String lists the figures, largest first, then the total.
func (m MemoryReport) String() string {
	var lines []string
	for name, mb := range m.Programs {
		lines = append(lines, fmt.Sprintf("%6d MB  %s", mb, name))
	}
	for node, mb := range m.Pods {
		lines = append(lines, fmt.Sprintf("%6d MB  pods on %s", mb, node))
	}
	sort.Sort(sort.Reverse(sort.StringSlice(lines)))
	return strings.Join(append(lines, fmt.Sprintf("%6d MB  in all", m.Total())), "\n")
}

// Memory reads the running cluster's memory (see MemoryReport).
func (c *Cluster) Memory() MemoryReport {
	m := MemoryReport{Programs: map[string]int64{}, Pods: map[string]int64{}}
	for _, ns := range clusterNetNSes(c.cfg.NetNS) {
		for _, pid := range netNSPIDs(ns) {
			name, kb := processRSS(pid)
			m.Programs[name] += kb >> 10
		}
	}
	for _, n := range c.cfg.AllNodes() {
		m.Pods[n.Name] = cgroupRSS(n.CgroupRoot) >> 20
	}
	return m
}

// processRSS is a process's command name and resident set in kB (0 when
// it has gone).
func processRSS(pid int) (string, int64) {
	dir := filepath.Join("/proc", strconv.Itoa(pid))
	comm, _ := os.ReadFile(filepath.Join(dir, "comm"))
	return strings.TrimSpace(string(comm)), statusField(filepath.Join(dir, "status"), "VmRSS:")
}

// cgroupRSS is the total_rss in bytes of a cgroup in the memory hierarchy
// (cgroup v1), 0 when there is none.
func cgroupRSS(cgroup string) int64 {
	for _, mount := range cgroupMounts() {
		if v := statusField(filepath.Join(mount, cgroup, "memory.stat"), "total_rss"); v > 0 {
			return v
		}
	}
	return 0
}

// statusField is the first number after key on the line of path that
// starts with key.
func statusField(path, key string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == key {
			v, _ := strconv.ParseInt(fields[1], 10, 64)
			return v
		}
	}
	return 0
}
