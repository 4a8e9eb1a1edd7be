package clustertest

import (
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/cluster"
	"github.com/kubesky/kubesky/internal/polltest"
)

// The partition's sizes: names asked on the cut-off node, how long it is
// cut off, how often every name is asked meanwhile, and how soon after it
// rejoins it must answer a change made while it was away.
const (
	partitionNames    = 50
	partitionFor      = 2 * time.Minute
	partitionRound    = 5 * time.Second
	partitionCatchUp  = 5 * time.Second
	partitionTable    = "kubesky-partition"
	partitionEtcdPort = 2379 // the relays' (and every etcd's) client port
)

// TestNodeLocalPartition cuts one node off the control plane (nftables in
// its network namespace drop every packet to or from port 2379: the
// relays the node's skydns reads), changes a Service's address meanwhile,
// asks every name on that node every partitionRound for partitionFor (each
// must be answered from the node's snapshot, the changed one with its old
// address), then lifts the drop and measures how long the node takes to
// answer the new address. It writes bench/results/node-local-partition.md
// (make bench-node-local-partition).
func TestNodeLocalPartition(t *testing.T) {
	if os.Getenv("KUBESKY_BENCH_NODE_LOCAL") != "1" {
		t.Skip("a partition of minutes: run with KUBESKY_BENCH_NODE_LOCAL=1 (make bench-node-local-partition)")
	}
	c := startCluster(t, cluster.TopologyNodeLocal)
	names := createCompared(t, c, partitionNames)
	cut := c.Cfg().Node(1)
	server := cluster.DNSPort(c.Cfg().Addresses().NodeLocalDNS)
	before := comparedAddress(0, 0)
	polltest.Every(t, time.Minute, apiPoll, "every name answered on "+cut.Name, func() error {
		var first error
		askEveryName(cut, server, names, func(_ string, _ *dns.Msg, err error) { first = cmp.Or(first, err) })
		return first
	})

	setPartition(t, cut, true)
	t.Cleanup(func() { setPartition(t, cut, false) })
	cutAt := time.Now()
	after := comparedAddress(0, 1)
	setEndpoint(t, c, "cmp-0", after, false)
	asked, failed := keepAsking(t, cut, server, names, cutAt.Add(partitionFor), func(name string, reply *dns.Msg) error {
		if name == names[0] && !answers(reply, before) {
			return fmt.Errorf("%s answered %v while cut off, want the old %s: the drop let the change through", name, reply.Answer, before)
		}
		return nil
	})
	cutFor := time.Since(cutAt)

	setPartition(t, cut, false)
	rejoined := time.Now()
	polltest.Every(t, time.Minute, 20*time.Millisecond, names[0]+" answering its new address on "+cut.Name, func() error {
		reply, err := exchangeOnNode(cut, server, names[0])
		if err != nil || !answers(reply, after) {
			return fmt.Errorf("not yet (%v)", err)
		}
		return nil
	})
	catchUp := time.Since(rejoined)
	t.Logf("%s cut off for %s: %d lookups, %d failed; the change made meanwhile answered %s after it rejoined", cut.Name, cutFor.Round(time.Second), asked, failed, catchUp.Round(time.Millisecond))
	writePartition(t, c, cut, cutFor, asked, failed, catchUp)
	if failed > 0 {
		t.Errorf("%d of %d lookups on %s failed while it was cut off, want none", failed, asked, cut.Name)
	}
	if catchUp > partitionCatchUp {
		t.Errorf("%s answered the change %s after it rejoined, want within %s", cut.Name, catchUp.Round(time.Millisecond), partitionCatchUp)
	}
}

// setPartition adds (on) or deletes the nftables table that drops node n's
// traffic to and from partitionEtcdPort, in n's network namespace.
func setPartition(t *testing.T, n cluster.Node, on bool) {
	t.Helper()
	script := fmt.Sprintf("table inet %s\ndelete table inet %s\n", partitionTable, partitionTable) // "table" first: deleting one that is not there fails
	if on {
		script = fmt.Sprintf(`table inet %[1]s {
	chain in { type filter hook input priority -300; tcp sport %[2]d drop; }
	chain out { type filter hook output priority -300; tcp dport %[2]d drop; }
}
`, partitionTable, partitionEtcdPort)
	}
	cmd := exec.Command("ip", "netns", "exec", n.NetNS, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nft on %s (on=%v): %v\n%s", n.Name, on, err, out)
	}
}

// keepAsking asks every name on node n each partitionRound until until,
// checking each answer with check, and returns the lookups made and how
// many failed (no answer, an error rcode, no record, or check's error);
// each failure is logged.
func keepAsking(t *testing.T, n cluster.Node, server string, names []string, until time.Time, check func(string, *dns.Msg) error) (asked, failed int) {
	t.Helper()
	tick := time.NewTicker(partitionRound)
	defer tick.Stop()
	for {
		askEveryName(n, server, names, func(name string, reply *dns.Msg, err error) {
			asked++
			if err == nil {
				err = check(name, reply)
			}
			if err != nil {
				failed++
				t.Logf("%s on %s: %v", name, n.Name, err)
			}
		})
		if time.Now().After(until) {
			return asked, failed
		}
		<-tick.C
	}
}

// askEveryName asks every name on node n and calls each with its reply and
// an error when none came or it holds no record.
func askEveryName(n cluster.Node, server string, names []string, each func(string, *dns.Msg, error)) {
	for _, name := range names {
		reply, err := exchangeOnNode(n, server, name)
		if err == nil && (reply.Rcode != dns.RcodeSuccess || len(reply.Answer) == 0) {
			err = fmt.Errorf("%s: %s, %d records", name, dns.RcodeToString[reply.Rcode], len(reply.Answer))
		}
		each(name, reply, err)
	}
}

// writePartition writes bench/results/node-local-partition.md.
func writePartition(t *testing.T, c *cluster.Cluster, n cluster.Node, cutFor time.Duration, asked, failed int, catchUp time.Duration) {
	t.Helper()
	text := fmt.Sprintf(`# Node-local skydns cut off from the control plane

`+"`make bench-node-local-partition NODES=%d`"+`, one run, %s, on a real cluster on this 2-core machine
(cluster/clustertest TestNodeLocalPartition). nftables in %s's network namespace dropped every packet to and from
port %d (the read-only relays its skydns reads the zone through) for %s; meanwhile one of %d Services changed its
address, and every one of the names was asked on the node every %s.

| | skydns (deploy/node-local) |
|---|---|
| lookups on the cut-off node while cut off: failed / asked | %d / %d |
| the changed Service while cut off | its old address, from the node's snapshot |
| the change answered on the node after the drop was lifted | %s (bound: %s) |
`, c.Cfg().Nodes, time.Now().UTC().Format("2006-01-02"), n.Name, partitionEtcdPort, cutFor.Round(time.Second), partitionNames,
		partitionRound, failed, asked, short(catchUp), partitionCatchUp)
	if err := os.WriteFile(filepath.Join(c.Cfg().RepoDir, "bench", "results", "node-local-partition.md"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
