package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kubesky/kubesky/cluster"
)

func TestBadCommandLines(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no command", nil, "usage: kubesky-cluster up|clean|upstream"},
		{"an unknown command", []string{"down"}, `unknown command "down"`},
		{"an unknown flag", []string{"up", "--no-such-flag"}, "unknown flag: --no-such-flag"},
		{"no nodes", []string{"up", "--nodes=0"}, "--nodes: 0 is not between 1 and 40"},
		{"a node count that is not a number", []string{"up", "--nodes=three"}, `invalid argument "three" for "--nodes"`},
		{"three clusters", []string{"up", "--clusters=3"}, "--clusters: 3 is not between 1 and 2"},
		{"a clusterset of IPv6 clusters", []string{"up", "--clusters=2", "--ip-family=ipv6"}, "--ip-family: a clusterset's clusters are ipv4 only"},
		{"a clusterset of shared etcd clusters", []string{"clean", "--clusters=2", "--topology=shared"}, "--topology: a clusterset's clusters deploy per-pod only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tc.args, &stdout, &stderr); code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tc.want)
			}
		})
	}
}

func TestGuideShowsTheNetnsHelper(t *testing.T) {
	out := guide(cluster.DefaultConfig("/repo"), "k")
	for _, want := range []string{"ip netns exec kubesky /repo/bin/kubectl --kubeconfig /repo/.cache/cluster/run/kubeconfig", "10.96.0.10", "Ctrl-C"} {
		if !strings.Contains(out, want) {
			t.Errorf("guide lacks %q:\n%s", want, out)
		}
	}
}

func TestAClustersetsMembersHaveTheirOwnNamesAndRanges(t *testing.T) {
	members, err := memberConfigs(cluster.DefaultConfig("/repo"), 2)
	if err != nil {
		t.Fatal(err)
	}
	east, west := members[0], members[1]
	for _, tc := range []struct{ what, east, west string }{
		{"namespace", east.NetNS, west.NetNS},
		{"node", east.Node(1).Name, west.Node(1).Name},
		{"node address", east.Node(1).IP, west.Node(1).IP},
		{"pod range", east.Addresses().ClusterCIDR, west.Addresses().ClusterCIDR},
		{"kubeconfig", east.Kubeconfig(), west.Kubeconfig()},
	} {
		if tc.east == tc.west {
			t.Errorf("both clusters' %s is %s", tc.what, tc.east)
		}
	}
	if got := west.Node(1).Name; got != "kubesky-west-node-1" {
		t.Errorf("west's first node is %s, want kubesky-west-node-1 (its namespace's name too)", got)
	}
	if got, lone := east.Addresses().ServiceCIDR, cluster.DefaultConfig("").Addresses().ServiceCIDR; got != lone || west.Addresses().ServiceCIDR != lone {
		t.Errorf("Service ranges %s and %s, want the lone cluster's %s in both", got, west.Addresses().ServiceCIDR, lone)
	}
}
