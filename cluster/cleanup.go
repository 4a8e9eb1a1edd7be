package cluster

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Clean removes what a cluster leaves behind, whether it was stopped or
// crashed, with however many nodes: every process in its network
// namespaces and in the nodes' cgroups, those cgroups, the namespaces, and
// /run/netns if the cluster created it. It does nothing when there is
// nothing to remove.
func Clean(cfg Config) error {
	namespaces := clusterNetNSes(cfg.NetNS)
	cgroups := cgroupRoots(cfg.nodeNamePrefix())
	killAll(namespaces, cgroups)
	var errs []error
	for _, dir := range cgroups {
		if err := removeCgroupTree(dir); err != nil {
			errs = append(errs, err)
		}
	}
	for _, name := range namespaces {
		if err := deleteNetNS(name); err != nil {
			errs = append(errs, err)
		}
	}
	if err := removeNetNSDir(cfg.netnsDirMarker()); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// killAll sends SIGKILL to every process in the namespaces or the nodes'
// cgroups until none is left (new ones may appear while a runtime is dying),
// for up to 10 seconds.
func killAll(namespaces, cgroups []string) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		pids := cgroupPIDs(cgroups)
		for _, name := range namespaces {
			pids = append(pids, netNSPIDs(name)...)
		}
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond) // the polling interval, not a wait for a condition
	}
}

// PodCgroups lists the cgroup roots (see Node.CgroupRoot) of every node of
// every cluster, lone or of a clusterset, in every mounted hierarchy where
// they exist.
func PodCgroups() []string { return cgroupRoots("kubesky-*node-") }

// cgroupRoots lists the cgroups whose names begin with the node name
// prefix (a glob pattern) in every mounted hierarchy.
func cgroupRoots(prefix string) []string {
	var dirs []string
	for _, mount := range cgroupMounts() {
		found, _ := filepath.Glob(filepath.Join(mount, prefix+"*"))
		dirs = append(dirs, found...)
	}
	return dirs
}

// createCgroupRoot makes the node's cgroup root in every hierarchy (the
// kubelet refuses a root that does not exist), giving it the parent's CPUs
// and memory nodes in the cpuset hierarchy, which a new v1 cgroup starts
// without.
func createCgroupRoot(n Node) error {
	for _, mount := range cgroupMounts() {
		dir := filepath.Join(mount, n.CgroupRoot)
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
		for _, file := range []string{"cpuset.cpus", "cpuset.mems"} {
			value, err := os.ReadFile(filepath.Join(mount, file))
			if err != nil {
				continue // not the cpuset hierarchy
			}
			if err := os.WriteFile(filepath.Join(dir, file), value, 0o644); err != nil {
				return fmt.Errorf("cgroup %s: %w", dir, err)
			}
		}
	}
	return nil
}

// cgroupMounts are the mount points of the cgroup (v1) and cgroup2
// hierarchies.
func cgroupMounts() []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var mounts []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// 36 35 0:30 / /sys/fs/cgroup/memory rw,... shared:15 - cgroup cgroup rw,memory
		fields := strings.Fields(sc.Text())
		for i, f := range fields {
			if f == "-" && i+1 < len(fields) && (fields[i+1] == "cgroup" || fields[i+1] == "cgroup2") {
				mounts = append(mounts, fields[4])
			}
		}
	}
	return mounts
}

// cgroupPIDs are the processes in the cgroup trees.
func cgroupPIDs(cgroups []string) []int {
	var pids []int
	for _, dir := range cgroups {
		_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() != "cgroup.procs" {
				return nil
			}
			data, _ := os.ReadFile(path)
			for _, f := range strings.Fields(string(data)) {
				var pid int
				if _, err := fmt.Sscan(f, &pid); err == nil {
					pids = append(pids, pid)
				}
			}
			return nil
		})
	}
	return pids
}

// removeCgroupTree removes a cgroup and its children, deepest first (a
// cgroup directory is removed with rmdir, once it has no children and no
// processes).
func removeCgroupTree(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			if err := removeCgroupTree(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	if err := syscall.Rmdir(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing cgroup %s: %w", dir, err)
	}
	return nil
}
