package cluster

import (
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestTheOverlayDialsTheBrokerWhereItListens checks that
// ClustersetOverlay's kube2sky and skydns dial the address and port
// startBroker listens on: the first member's control plane address.
func TestTheOverlayDialsTheBrokerWhereItListens(t *testing.T) {
	overlay, err := os.ReadFile(filepath.Join("..", ClustersetOverlay, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	first := DefaultConfig("").AsMember(1, "east")
	want := "--clusterset-etcd-endpoints=https://" + net.JoinHostPort(first.Addresses().ControlPlane, strconv.Itoa(brokerPort))
	if n := strings.Count(string(overlay), want); n != 2 {
		t.Errorf("the overlay has %q %d times, want 2 (kube2sky and skydns)", want, n)
	}
}

// TestTheMembersRangesAreApart checks that no node, pod or link range of
// one member overlaps another's, and that the Service range is shared.
func TestTheMembersRangesAreApart(t *testing.T) {
	var ranges []netip.Prefix
	for k := 1; k <= MaxMembers; k++ {
		cfg := DefaultConfig("").AsMember(k, "c"+strconv.Itoa(k))
		a := cfg.Addresses()
		for _, r := range []string{a.nodeSubnet(), a.ClusterCIDR, linkAddr(cfg) + "/32"} {
			ranges = append(ranges, netip.MustParsePrefix(r))
		}
		if a.ServiceCIDR != addressPlans[IPv4].ServiceCIDR {
			t.Errorf("member %d's Service range is %s, want the lone cluster's", k, a.ServiceCIDR)
		}
		if n := cfg.Node(1); !netip.MustParsePrefix(a.nodeSubnet()).Contains(netip.MustParseAddr(n.IP)) ||
			!netip.MustParsePrefix(a.ClusterCIDR).Contains(netip.MustParsePrefix(n.PodCIDR).Addr()) {
			t.Errorf("member %d's node 1 (%s, pods %s) is outside its ranges %s, %s", k, n.IP, n.PodCIDR, a.nodeSubnet(), a.ClusterCIDR)
		}
	}
	for i, a := range ranges {
		for _, b := range ranges[i+1:] {
			if a.Overlaps(b) {
				t.Errorf("%s overlaps %s", a, b)
			}
		}
	}
}

// TestAMembersSocketsAreNoLongerThanTheLoneClusters checks containerd's
// socket path of a member's node against the lone cluster's: a Unix socket
// path has at most 104 bytes, and CI's checkout may be deep.
func TestAMembersSocketsAreNoLongerThanTheLoneClusters(t *testing.T) {
	lone := DefaultConfig("/a/deep/checkout")
	for k, id := range []string{"east", "west"} {
		member := lone.AsMember(k+1, id)
		got, want := member.nodePaths(member.Node(1)).socket, lone.nodePaths(lone.Node(1)).socket
		if len(got) > len(want) {
			t.Errorf("%s's containerd socket %s is longer than the lone cluster's %s", id, got, want)
		}
	}
}
