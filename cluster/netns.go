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

// createNetworks creates the control plane's namespace and one per node.
// The control plane's holds a bridge with the API server's and the
// stand-in upstream's addresses; each node's is joined to it by a veth
// pair, with routes to the other nodes' pod ranges through their addresses
// (as kind's simple CNI does) and a default route to a next hop that does
// not exist (ClusterIPs need a route for the OUTPUT DNAT to happen). No
// link leaves the namespaces.
//
// When /run/netns does not exist yet, `ip netns add` creates it as a mount
// point; a marker file under the data dir records that, so that
// removeNetNSDir can take it away again.
func createNetworks(cfg Config) error {
	if _, err := os.Stat(netnsDir); errors.Is(err, os.ErrNotExist) {
		if err := os.WriteFile(cfg.netnsDirMarker(), nil, 0o644); err != nil {
			return err
		}
	}
	a := cfg.Addresses()
	steps := [][]string{
		{"netns", "add", cfg.NetNS},
		{"-n", cfg.NetNS, "link", "set", "lo", "up"},
		{"-n", cfg.NetNS, "link", "add", bridgeName, "type", "bridge"},
		{a.ip(), "-n", cfg.NetNS, "addr", "add", prefix(a.ControlPlane, a.bridgeBits), "dev", bridgeName, "nodad"},
		{a.ip(), "-n", cfg.NetNS, "addr", "add", prefix(a.Upstream, a.hostBits), "dev", bridgeName, "nodad"},
		{"-n", cfg.NetNS, "link", "set", bridgeName, "up"},
	}
	nodes := cfg.AllNodes()
	for _, n := range nodes {
		steps = append(steps, nodeLinkSteps(cfg.NetNS, a, n, nodes)...)
	}
	for _, step := range steps {
		if err := run("ip", step...); err != nil {
			return err
		}
	}
	return nil
}

// nodeLinkSteps are the `ip` commands that make node n's namespace and join
// it to the bridge in the control plane's namespace.
func nodeLinkSteps(control string, a Addresses, n Node, nodes []Node) [][]string {
	port := fmt.Sprintf("veth-node-%d", n.Index)
	in := func(args ...string) []string { return append([]string{"-n", n.NetNS}, args...) }
	in46 := func(args ...string) []string { return append([]string{a.ip(), "-n", n.NetNS}, args...) }
	steps := [][]string{
		{"netns", "add", n.NetNS},
		in("link", "set", "lo", "up"),
		{"-n", control, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", n.NetNS},
		{"-n", control, "link", "set", port, "master", bridgeName, "up"},
		in46("addr", "add", prefix(n.IP, a.bridgeBits), "dev", "eth0", "nodad"),
		in("link", "set", "eth0", "up"),
		in46("route", "add", "default", "via", a.gateway, "dev", "eth0", "onlink"),
		{a.ip(), "-n", control, "route", "add", n.PodCIDR, "via", n.IP},
	}
	for _, other := range nodes {
		if other.Index != n.Index {
			steps = append(steps, in46("route", "add", other.PodCIDR, "via", other.IP))
		}
	}
	return steps
}

// prefix is ip/bits.
func prefix(ip string, bits int) string { return fmt.Sprintf("%s/%d", ip, bits) }

// clusterNetNSes lists the namespaces of the cluster named control that
// exist: the control plane's and every node's, however many a crashed run
// made.
func clusterNetNSes(control string) []string {
	entries, err := os.ReadDir(netnsDir)
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		if e.Name() == control || strings.HasPrefix(e.Name(), control+"-node-") {
			names = append(names, e.Name())
		}
	}
	return names
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
