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

// podCgroup is the cgroup the kubelet (cgroupfs driver, default root) puts
// every pod under, in each hierarchy.
const podCgroup = "kubepods"

// Clean removes what a cluster leaves behind, whether it was stopped or
// crashed: every process in the network namespace and in the pods'
// cgroups, those cgroups, the namespace, and /run/netns if the cluster
// created it. It does nothing when there is nothing to remove.
func Clean(cfg Config) error {
	killAll(cfg.NetNS)
	var errs []error
	for _, dir := range PodCgroups() {
		if err := removeCgroupTree(dir); err != nil {
			errs = append(errs, err)
		}
	}
	if err := deleteNetNS(cfg.NetNS); err != nil {
		errs = append(errs, err)
	}
	if err := removeNetNSDir(cfg.netnsDirMarker()); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// killAll sends SIGKILL to every process in the namespace or the pods'
// cgroups until none is left (new ones may appear while a runtime is dying),
// for up to 10 seconds.
func killAll(netns string) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		pids := append(netNSPIDs(netns), podPIDs()...)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond) // the polling interval, not a wait for a condition
	}
}

// PodCgroups lists the pod cgroup directory in every mounted hierarchy
// where it exists.
func PodCgroups() []string {
	var dirs []string
	for _, mount := range cgroupMounts() {
		dir := filepath.Join(mount, podCgroup)
		if _, err := os.Stat(dir); err == nil {
			dirs = append(dirs, dir)
		}
	}
	return dirs
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

// podPIDs are the processes in the pod cgroups.
func podPIDs() []int {
	var pids []int
	for _, dir := range PodCgroups() {
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
