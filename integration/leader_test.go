package integration

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/kubesky/kubesky/integration/harness"
)

// leaseTTL is the leader lease of the replicas in TestLeaderFailover.
const leaseTTL = 3 * time.Second

// takeoverSlack is what a takeover may take beyond the lease TTL: etcd
// expires leases on a 500 ms tick, the standby must see the deletion and
// campaign, and the test polls /metrics every 250 ms at most.
const takeoverSlack = 1500 * time.Millisecond

// TestLeaderFailover runs two kube2sky replicas: exactly one writes. When
// the leader is killed with SIGKILL (no chance to revoke its lease), the
// other takes over within the lease TTL and applies every change made
// before, during and after the failover.
func TestLeaderFailover(t *testing.T) {
	leaseFlag := "--leader-elect-lease-duration=" + leaseTTL.String()
	s := startStack(t, stackOptions{kube2skyArgs: []string{leaseFlag}})
	replicas := []*harness.Kube2Sky{s.kube2sky, s.startKube2Sky(t, leaseFlag)}
	const ns = "failover"
	createNamespace(t, s.kube, ns)
	for i := range 5 {
		createService(t, s.kube, ns, fmt.Sprintf("before-%d", i), fmt.Sprintf("10.96.23.%d", 10+i))
	}
	expectWithin(t, s.skydns.DNSAddr, expectTimeout, aRecords(serviceName(ns, "before-4"), "10.96.23.14"))

	leader, standby := leaderAndStandby(t, replicas)
	t.Run("only the leader writes", func(t *testing.T) {
		if n := standby.Metric("kube2sky_etcd_txns_total"); n != 0 {
			t.Errorf("standby committed %v transactions", n)
		}
		if n := standby.Metric("kube2sky_records_written_total"); n != 0 {
			t.Errorf("standby wrote %v records", n)
		}
		if n := leader.Metric("kube2sky_etcd_txns_total"); n == 0 {
			t.Error("the leader committed no transaction")
		}
	})

	leader.Process.Kill()
	killed := time.Now()
	deleteService(t, s.kube, ns, "before-0")
	createService(t, s.kube, ns, "during", "10.96.23.20")
	t.Run("the standby takes over within the lease TTL", func(t *testing.T) {
		harness.Eventually(t, leaseTTL+5*time.Second, func() error { return wantLeading(standby) })
		took := time.Since(killed)
		t.Logf("takeover %v after SIGKILL (lease TTL %v)", took.Round(time.Millisecond), leaseTTL)
		fmt.Printf("leader failover: standby leading %v after the leader's SIGKILL (lease TTL %v)\n", took.Round(time.Millisecond), leaseTTL)
		if took > leaseTTL+takeoverSlack {
			t.Errorf("takeover took %v, want at most the lease TTL %v (+%v)", took, leaseTTL, takeoverSlack)
		}
	})
	createService(t, s.kube, ns, "after", "10.96.23.21")
	t.Run("no change is lost across the failover", func(t *testing.T) {
		expectWithin(t, s.skydns.DNSAddr, expectTimeout,
			aRecords(serviceName(ns, "before-0")), aRecords(serviceName(ns, "before-1"), "10.96.23.11"),
			aRecords(serviceName(ns, "during"), "10.96.23.20"), aRecords(serviceName(ns, "after"), "10.96.23.21"))
	})
}

// leaderAndStandby waits until exactly one replica leads and the other is
// ready as a standby, and returns them in that order.
func leaderAndStandby(t *testing.T, replicas []*harness.Kube2Sky) (leader, standby *harness.Kube2Sky) {
	t.Helper()
	harness.Eventually(t, 30*time.Second, func() error {
		var leading []*harness.Kube2Sky
		for _, r := range replicas {
			if err := r.Ready(); err != nil {
				return err
			}
			if wantLeading(r) == nil {
				leading = append(leading, r)
			}
		}
		if len(leading) != 1 {
			return errors.New("want exactly one leader")
		}
		leader = leading[0]
		return nil
	})
	for _, r := range replicas {
		if r != leader {
			standby = r
		}
	}
	return leader, standby
}
