package skydns

import (
	"fmt"
	"net/netip"
	"os"
	"strings"

	"github.com/spf13/pflag"
)

// NodeLocalConfig is node-local mode: skydns as a hostNetwork DaemonSet
// answering on an address of its own on every node (such as
// 169.254.20.10), which it puts on the node itself (skydns/nodelocal).
// Nothing it makes is removed at exit, on purpose: the address is never
// the kube-dns Service's, so on a node left without skydns a query to it
// gets "port unreachable" at once and the client moves on to its second
// nameserver, the kube-dns Service.
type NodeLocalConfig struct {
	// Interface holds the address: a dummy link (an empty bridge where
	// the kernel has no dummy driver), made if missing. Empty: off.
	Interface string
	// Notrack adds the nftables table inet kubesky-node-local, which keeps
	// DNS to and from the address out of conntrack.
	Notrack bool
	// PeerDir is a directory shared with the other skydns of the address
	// (a pod's emptyDir), where they share their UDP sockets (package
	// sockshare). Empty: off.
	PeerDir string
}

// Enabled reports whether node-local mode is on.
func (n NodeLocalConfig) Enabled() bool { return n.Interface != "" }

func (n *NodeLocalConfig) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&n.Interface, "node-local-interface", n.Interface, "node-local mode: put --dns-addr's IP (which must be a literal unicast IP, e.g. 169.254.20.10:53) on this interface, "+
		"made as a dummy (or an empty bridge) if missing; bind DNS only after the first full snapshot from etcd, share the port with other skydns (SO_REUSEPORT), "+
		"step aside on SIGTERM, and stay up and not ready on a setup failure, retrying. Nothing is removed at exit: with no skydns left the address answers "+
		"port unreachable and clients use their second nameserver (empty: off)")
	fs.StringVar(&n.PeerDir, "node-local-peers", n.PeerDir, "in node-local mode, a directory shared with the other skydns of --dns-addr (a pod's emptyDir): each hands copies of its UDP sockets to the others "+
		"through Unix sockets there, so that when one is killed (kill -9, an OOM kill) another answers the queries queued in its sockets instead of losing them (empty: off)")
	fs.BoolVar(&n.Notrack, "node-local-notrack", n.Notrack, "in node-local mode, keep DNS to and from --dns-addr out of conntrack with the nftables table inet kubesky-node-local (replaced whole at start)")
}

// validate checks the interface name and that dnsAddr is a literal
// unicast IP and a port, as node-local mode needs.
func (n NodeLocalConfig) validate(dnsAddr string) error {
	if !n.Enabled() {
		return nil
	}
	if err := checkInterfaceName(n.Interface); err != nil {
		return err
	}
	if err := checkPeerDir(n.PeerDir); err != nil {
		return err
	}
	if _, err := nodeLocalAddr(dnsAddr); err != nil {
		return fmt.Errorf("--dns-addr: %w (--node-local-interface is set)", err)
	}
	return nil
}

// checkPeerDir accepts an empty path or an existing directory.
func checkPeerDir(dir string) error {
	if dir == "" {
		return nil
	}
	info, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("--node-local-peers: %w", err)
	}
	if !info.IsDir() {
		return fmt.Errorf("--node-local-peers: %s is not a directory", dir)
	}
	return nil
}

// checkInterfaceName accepts what Linux accepts as a link name.
func checkInterfaceName(name string) error {
	if len(name) > 15 || name == "." || name == ".." || strings.ContainsAny(name, "/: \t\n") {
		return fmt.Errorf("--node-local-interface: %q is not an interface name (at most 15 characters, no '/', ':' or spaces)", name)
	}
	return nil
}

// nodeLocalAddr is dnsAddr as a unicast IP and a port other than 0.
func nodeLocalAddr(dnsAddr string) (netip.AddrPort, error) {
	ap, err := netip.ParseAddrPort(dnsAddr)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("%q: want a literal IP and port, such as 169.254.20.10:53", dnsAddr)
	}
	ip := ap.Addr()
	switch {
	case ip.IsUnspecified() || ip.IsMulticast() || ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return netip.AddrPort{}, fmt.Errorf("%q: %s is not a unicast address", dnsAddr, ip)
	case ip.Zone() != "":
		return netip.AddrPort{}, fmt.Errorf("%q: an address with a zone cannot be node-local", dnsAddr)
	case ap.Port() == 0:
		return netip.AddrPort{}, fmt.Errorf("%q: want a port other than 0", dnsAddr)
	}
	return netip.AddrPortFrom(ip.Unmap(), ap.Port()), nil
}
