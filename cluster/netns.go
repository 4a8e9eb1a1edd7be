package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// netnsDir is where `ip netns` keeps the namespaces' handles.
const netnsDir = "/run/netns"

// NetNSPath is the handle of the named network namespace.
func NetNSPath(name string) string { return filepath.Join(netnsDir, name) }

// createNetNS creates the namespace with loopback and a veth pair whose two
// ends are both inside it: nodev0 carries the node's address, the upstream
// stand-in's address and a default route to a next hop that does not exist
// (ClusterIPs need a route for the OUTPUT DNAT to happen).
//
// When /run/netns does not exist yet, `ip netns add` creates it as a mount
// point; marker (a file under the data dir) records that, so that
// removeNetNSDir can take it away again.
func createNetNS(name, marker string) error {
	if _, err := os.Stat(netnsDir); errors.Is(err, os.ErrNotExist) {
		if err := os.WriteFile(marker, nil, 0o644); err != nil {
			return err
		}
	}
	if err := run("ip", "netns", "add", name); err != nil {
		return err
	}
	in := func(args ...string) error { return run("ip", append([]string{"-n", name}, args...)...) }
	steps := [][]string{
		{"link", "set", "lo", "up"},
		{"link", "add", "nodev0", "type", "veth", "peer", "name", "nodev1"},
		{"addr", "add", NodeIP + "/24", "dev", "nodev0"},
		{"addr", "add", UpstreamIP + "/32", "dev", "nodev0"},
		{"link", "set", "nodev0", "up"},
		{"link", "set", "nodev1", "up"},
		{"route", "add", "default", "via", gatewayIP, "dev", "nodev0", "onlink"},
	}
	for _, step := range steps {
		if err := in(step...); err != nil {
			return err
		}
	}
	return nil
}

// deleteNetNS removes the namespace if it exists.
func deleteNetNS(name string) error {
	if _, err := os.Stat(NetNSPath(name)); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return run("ip", "netns", "del", name)
}

// removeNetNSDir removes /run/netns when this cluster created it (marker
// exists) and no namespace is left in it.
func removeNetNSDir(marker string) error {
	if _, err := os.Stat(marker); err != nil {
		return nil
	}
	if entries, err := os.ReadDir(netnsDir); err == nil && len(entries) > 0 {
		return nil // another program's namespaces live there now
	}
	_ = unix.Unmount(netnsDir, unix.MNT_DETACH) // `ip netns add` made it a mount point
	if err := os.Remove(netnsDir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return os.Remove(marker)
}

// netNSPIDs lists the processes whose network namespace is the named one.
func netNSPIDs(name string) []int {
	out, err := exec.Command("ip", "netns", "pids", name).Output()
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		var pid int
		if _, err := fmt.Sscan(f, &pid); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// DialInNetNS returns a dial function that opens connections from inside
// the named network namespace, for clients (client-go, HTTP, DNS) running
// in a process that stays in the host's namespace. Only the dialing thread
// enters the namespace, and only for the socket's creation.
func DialInNetNS(name string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		var conn net.Conn
		err := inNetNS(name, func() error {
			var err error
			conn, err = (&net.Dialer{}).DialContext(ctx, network, addr)
			return err
		})
		return conn, err
	}
}

// inNetNS runs fn on a thread switched into the named network namespace.
// When the thread cannot be switched back it is left locked, so Go
// discards it when this goroutine ends.
func inNetNS(name string, fn func() error) error {
	runtime.LockOSThread()
	self, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer self.Close()
	target, err := os.Open(NetNSPath(name))
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("entering network namespace %s: %w", name, err)
	}
	fnErr := fn()
	if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("leaving network namespace %s: %w", name, err)
	}
	runtime.UnlockOSThread()
	return fnErr
}

// run runs a command and returns its output in the error when it fails.
func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
