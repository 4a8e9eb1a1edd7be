package cluster

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/kubesky/kubesky/bench/proc"
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
			mem, err := proc.ReadMemory(pid)
			if err != nil {
				continue // gone, or a kernel thread
			}
			m.Programs[processName(pid)] += mem.RSS >> 20
		}
	}
	for _, n := range c.cfg.AllNodes() {
		m.Pods[n.Name] = cgroupRSS(n.CgroupRoot) >> 20
	}
	return m
}

// processName is a process's command name ("" when it has gone).
func processName(pid int) string {
	comm, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
	return strings.TrimSpace(string(comm))
}

// cgroupRSS is the total_rss in bytes of a cgroup in the memory hierarchy
// (cgroup v1), 0 when there is none.
func cgroupRSS(cgroup string) int64 {
	for _, mount := range cgroupMounts() {
		if v := memoryStat(filepath.Join(mount, cgroup, "memory.stat"), "total_rss"); v > 0 {
			return v
		}
	}
	return 0
}

// memoryStat is the value of key in a cgroup's memory.stat file at path
// ("total_rss 4096" lines), 0 when it is missing.
func memoryStat(path, key string) int64 {
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
