package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kubesky/kubesky/integration/harness"
)

const (
	// recoverWithin bounds how long the parts may take to be healthy again
	// after a fault is healed.
	recoverWithin = 90 * time.Second
	// quotaBytes is every etcd member's --quota-backend-bytes, small so
	// that the quota fault can fill it in seconds.
	quotaBytes = 64 << 20
	// fillValueBytes is the size of each value the quota fault writes.
	fillValueBytes = 1 << 20
	// fillPrefix holds the quota fault's values, outside the DNS prefix.
	fillPrefix = "/soak-fill/"
	// burstChanges is how many changes the compaction fault makes at once.
	burstChanges = 40
)

// soakFault is one kind of fault: inject starts it and returns what heals
// it.
type soakFault struct {
	kind   string
	inject func(t *testing.T, r *soakRun) (heal func())
}

// soakFaults is every kind of fault the schedule draws from.
var soakFaults = []soakFault{
	{"etcd member kill -9", func(t *testing.T, r *soakRun) func() { return killEtcd(r.etcdFollower(t)) }},
	{"etcd member SIGSTOP", func(t *testing.T, r *soakRun) func() { return pause(r.etcdFollower(t).Process) }},
	{"etcd leader kill -9", func(t *testing.T, r *soakRun) func() { return killEtcd(r.etcdLeader(t)) }},
	{"etcd leader SIGSTOP", func(t *testing.T, r *soakRun) func() { return pause(r.etcdLeader(t).Process) }},
	{"etcd member partition", partitionEtcd},
	{"kube2sky leader kill -9", func(t *testing.T, r *soakRun) func() { return killDaemon(&r.kube2skyLeader(t).Daemon) }},
	{"kube2sky leader SIGSTOP", func(t *testing.T, r *soakRun) func() { return pause(r.kube2skyLeader(t).Process) }},
	{"skydns kill -9", func(t *testing.T, r *soakRun) func() { return killDaemon(&r.oneSkyDNS().Daemon) }},
	{"skydns SIGSTOP", func(t *testing.T, r *soakRun) func() { return pause(r.oneSkyDNS().Process) }},
	{"kube-apiserver restart", func(t *testing.T, r *soakRun) func() { return func() { r.api.Restart(t) } }},
	{"etcd compaction after a burst", compactAfterBurst},
	{"etcd space quota reached and released", fillQuota},
}

// schedule returns the fault kinds in the order the seed gives: every
// kind once in a shuffled round, round after round.
func schedule(rng *rand.Rand, rounds int) []soakFault {
	var order []soakFault
	for range rounds {
		round := append([]soakFault(nil), soakFaults...)
		rng.Shuffle(len(round), func(i, j int) { round[i], round[j] = round[j], round[i] })
		order = append(order, round...)
	}
	return order
}

func killEtcd(m *harness.EtcdMember) func() {
	m.Process.Kill()
	return m.Restart
}

func killDaemon(d *harness.Daemon) func() {
	d.Process.Kill()
	return func() {
		d.Process.Start()
		d.WaitReady(harness.DaemonReadyTimeout)
	}
}

func pause(p *harness.Process) func() {
	p.Pause()
	return p.Continue
}

func partitionEtcd(t *testing.T, r *soakRun) func() {
	m := r.cluster.Members[r.faultRNG.IntN(len(r.cluster.Members))]
	r.cluster.Partition(m)
	return func() { r.cluster.Heal(m) }
}

// compactAfterBurst makes burstChanges changes at once and compacts the
// DNS etcd at its revision as soon as the API server acknowledged them,
// while the readers are still catching up.
func compactAfterBurst(t *testing.T, r *soakRun) func() {
	r.burst(burstChanges)
	r.compact(t)
	return func() {}
}

// compact compacts the DNS etcd at its current revision, once the history
// recorder holds every revision up to it.
func (r *soakRun) compact(t *testing.T) {
	t.Helper()
	rev, err := r.history.sync(t.Context(), 30*time.Second)
	if err != nil {
		t.Fatalf("before compacting: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := r.cluster.Client().Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil {
		t.Fatalf("compacting at %d: %v", rev, err)
	}
}

// fillQuota writes large values outside the DNS prefix until etcd refuses
// them for lack of space (its NOSPACE alarm then refuses every write,
// kube2sky's too), and returns the release: delete them, compact,
// defragment every member, disarm the alarm.
func fillQuota(t *testing.T, r *soakRun) func() {
	value := strings.Repeat("x", fillValueBytes)
	for i := range 4 * quotaBytes / fillValueBytes {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		_, err := r.cluster.Client().Put(ctx, fmt.Sprintf("%s%d", fillPrefix, i), value)
		cancel()
		if err == rpctypes.ErrNoSpace || (err != nil && strings.Contains(err.Error(), rpctypes.ErrNoSpace.Error())) {
			return func() { r.releaseQuota(t) }
		}
		if err != nil {
			t.Fatalf("filling the quota: put %d: %v", i, err)
		}
	}
	t.Fatalf("etcd took %d bytes without reaching its %d-byte quota", 4*quotaBytes, quotaBytes)
	return nil
}

func (r *soakRun) releaseQuota(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	c := r.cluster.Client()
	if _, err := c.Delete(ctx, fillPrefix, clientv3.WithPrefix()); err != nil {
		t.Fatalf("deleting the fill: %v", err)
	}
	r.compact(t)
	for _, m := range r.cluster.Members {
		if _, err := c.Defragment(ctx, m.Endpoint); err != nil {
			t.Fatalf("defragmenting %s: %v", m.Endpoint, err)
		}
	}
	alarms, err := c.AlarmList(ctx)
	if err != nil {
		t.Fatalf("listing alarms: %v", err)
	}
	for _, a := range alarms.Alarms {
		if _, err := c.AlarmDisarm(ctx, (*clientv3.AlarmMember)(a)); err != nil {
			t.Fatalf("disarming %v: %v", a, err)
		}
	}
}

// etcdLeader returns the DNS etcd's leader.
func (r *soakRun) etcdLeader(t *testing.T) *harness.EtcdMember {
	t.Helper()
	var leader *harness.EtcdMember
	harness.Eventually(t, 30*time.Second, func() error {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		var err error
		leader, err = r.cluster.Leader(ctx)
		return err
	})
	return leader
}

// etcdFollower returns a random member that does not lead.
func (r *soakRun) etcdFollower(t *testing.T) *harness.EtcdMember {
	t.Helper()
	leader := r.etcdLeader(t)
	var followers []*harness.EtcdMember
	for _, m := range r.cluster.Members {
		if m != leader {
			followers = append(followers, m)
		}
	}
	return followers[r.faultRNG.IntN(len(followers))]
}

// kube2skyLeader returns the kube2sky replica that leads.
func (r *soakRun) kube2skyLeader(t *testing.T) *harness.Kube2Sky {
	t.Helper()
	leader, _ := leaderAndStandby(t, r.kube2sky)
	return leader
}

// oneSkyDNS returns a random skydns.
func (r *soakRun) oneSkyDNS() *harness.SkyDNS {
	return r.skydns[r.faultRNG.IntN(len(r.skydns))]
}

// recovered returns nil once every part is healthy: every etcd member,
// the API server, both skydns, and both kube2sky with one of them leading.
func (r *soakRun) recovered(ctx context.Context) error {
	if err := r.cluster.Healthy(); err != nil {
		return err
	}
	if err := r.api.Ready(ctx); err != nil {
		return err
	}
	for _, s := range r.skydns {
		if err := s.Ready(); err != nil {
			return err
		}
	}
	leading := 0
	for _, k := range r.kube2sky {
		if err := k.Ready(); err != nil {
			return err
		}
		if wantLeading(k) == nil {
			leading++
		}
	}
	if leading != 1 {
		return fmt.Errorf("%d kube2sky replicas lead, want 1", leading)
	}
	return nil
}
