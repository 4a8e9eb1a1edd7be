package cluster

import (
	"fmt"
	"net"
	"strings"
)

// The IP families a cluster can have (Config.IPFamily): all its Service,
// pod and node addresses are of one family.
const (
	IPv4 = "ipv4"
	IPv6 = "ipv6"
)

// Addresses are a cluster's addresses, all of one family. They exist only
// inside its namespaces.
type Addresses struct {
	Family       string
	ControlPlane string // the API server's, on the cluster's bridge
	Upstream     string // the stand-in for an upstream resolver
	ClusterDNS   string // the kube-dns Service of deploy/kubernetes
	// NodeLocalDNS is the link-local address deploy/node-local's skydns
	// answers on, on every node (empty: the family has no node-local
	// topology here).
	NodeLocalDNS string
	ServiceCIDR  string
	ClusterCIDR  string // every node's pod range is inside
	gateway      string // the nodes' default route's next hop: a dead end
	bridgeBits   int    // the prefix length on the bridge
	hostBits     int    // the prefix length of a single address
	// The formats of node i's address, pod range and pod gateway.
	nodeFmt, podFmt, podGatewayFmt string
}

var addressPlans = map[string]Addresses{
	IPv4: {
		Family: IPv4, ControlPlane: "10.0.0.2", Upstream: "10.0.0.53", ClusterDNS: "10.96.0.10",
		NodeLocalDNS: "169.254.20.10",
		ServiceCIDR:  "10.96.0.0/16", ClusterCIDR: "10.244.0.0/16", gateway: "10.0.0.1",
		bridgeBits: 24, hostBits: 32,
		nodeFmt: "10.0.0.%d", podFmt: "10.244.%d.0/24", podGatewayFmt: "10.244.%d.1",
	},
	IPv6: {
		Family: IPv6, ControlPlane: "fd00:10::2", Upstream: "fd00:10::53", ClusterDNS: "fd00:10:96::a",
		ServiceCIDR: "fd00:10:96::/112", ClusterCIDR: "fd00:10:244::/56", gateway: "fd00:10::1",
		bridgeBits: 64, hostBits: 128,
		nodeFmt: "fd00:10::%d", podFmt: "fd00:10:244:%d::/64", podGatewayFmt: "fd00:10:244:%d::1",
	},
}

// member is the IPv4 plan of a clusterset's k-th member (k > 1): nodes on
// 10.<k-1>.0.0/24 and pods in 10.<243+k>.0.0/16, routed to the other
// members' (joinNetworks). Its Service range is the first member's: a
// clusterset IP is a Service of the asking cluster, never routed between
// clusters.
func (a Addresses) member(k int) Addresses {
	nodes, pods := fmt.Sprintf("10.%d.0", k-1), fmt.Sprintf("10.%d", 243+k)
	a.ControlPlane, a.Upstream, a.gateway = nodes+".2", nodes+".53", nodes+".1"
	a.ClusterCIDR = pods + ".0.0/16"
	a.nodeFmt, a.podFmt, a.podGatewayFmt = nodes+".%d", pods+".%d.0/24", pods+".%d.1"
	return a
}

// nodeSubnet is the range of the cluster's bridge, the nodes' addresses.
func (a Addresses) nodeSubnet() string {
	_, subnet, err := net.ParseCIDR(prefix(a.ControlPlane, a.bridgeBits))
	if err != nil {
		panic(err) // the plans' addresses are constants
	}
	return subnet.String()
}

// nodeIP is node i's address (i from 1): 10.0.0.11 and on, or
// fd00:10::11 and on.
func (a Addresses) nodeIP(i int) string { return fmt.Sprintf(a.nodeFmt, 10+i) }

// podCIDR is node i's pod range: 10.244.i.0/24 or fd00:10:244:i::/64.
func (a Addresses) podCIDR(i int) string { return fmt.Sprintf(a.podFmt, i) }

// podGateway is the first address of node i's pod range, on its cni0.
func (a Addresses) podGateway(i int) string { return fmt.Sprintf(a.podGatewayFmt, i) }

// ip is the family's option of the `ip` command.
func (a Addresses) ip() string {
	if a.Family == IPv6 {
		return "-6"
	}
	return "-4"
}

// anyAddress is the family's wildcard address.
func (a Addresses) anyAddress() string {
	if a.Family == IPv6 {
		return "::"
	}
	return "0.0.0.0"
}

// FamilyOf is the IP family of an address: IPv6 when it has a colon.
func FamilyOf(addr string) string {
	if strings.Contains(addr, ":") {
		return IPv6
	}
	return IPv4
}

// DNSPort is ip's DNS port as host:port ([ip]:53 for IPv6).
func DNSPort(ip string) string { return net.JoinHostPort(ip, "53") }
