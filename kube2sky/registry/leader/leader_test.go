package leader

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/polltest"
	"github.com/kubesky/kubesky/kube2sky/registry"
)

const (
	testPrefix = "/skydns/local/cluster/_kube2sky/leader/test"
	testLease  = 3 * time.Second
)

// replica is one Elector campaigning in the background with a client of
// its own.
type replica struct {
	*Elector
	client *clientv3.Client
	stop   context.CancelFunc
	done   chan struct{}

	mu    sync.Mutex
	terms int // terms begun; guarded by mu
}

// startEtcd starts etcd with auth on: root, and kube2sky, whose only role
// reads and writes /skydns/ (as deploy/README.md's kube2sky identity).
func startEtcd(t *testing.T) (*etcdtest.Server, *etcdtest.PKI) {
	t.Helper()
	pki := etcdtest.NewPKI(t)
	etcd := etcdtest.StartSecure(t, pki, "root")
	ctx, c := t.Context(), etcd.Client
	steps := []func() error{
		func() error {
			_, err := c.UserAddWithOptions(ctx, "root", "", &clientv3.UserAddOptions{NoPassword: true})
			return err
		},
		func() error { _, err := c.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := c.RoleAdd(ctx, "kube2sky"); return err },
		func() error {
			_, err := c.RoleGrantPermission(ctx, "kube2sky", "/skydns/", clientv3.GetPrefixRangeEnd("/skydns/"),
				clientv3.PermissionType(clientv3.PermReadWrite))
			return err
		},
		func() error {
			_, err := c.UserAddWithOptions(ctx, "kube2sky", "", &clientv3.UserAddOptions{NoPassword: true})
			return err
		},
		func() error { _, err := c.UserGrantRole(ctx, "kube2sky", "kube2sky"); return err },
		func() error { _, err := c.AuthEnable(ctx); return err },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("setting up etcd's users: %v", err)
		}
	}
	return etcd, pki
}

// startReplica starts a replica that reaches etcd as user kube2sky.
func startReplica(t *testing.T, etcd *etcdtest.Server, pki *etcdtest.PKI, name string) *replica {
	t.Helper()
	client := etcdtest.NewClientWith(t, pki.Options(etcd.ClientURL(), pki.Client(t, "kube2sky")))
	log := slog.New(slog.NewTextHandler(t.Output(), nil)).With("replica", name)
	probe := registry.NewProbe(registry.NewStore(client, time.Second, 128), testPrefix, 100*time.Millisecond,
		prometheus.NewGauge(prometheus.GaugeOpts{Name: "up"}), log)
	cfg := Config{Prefix: testPrefix, Identity: name, Owner: "test", LeaseDuration: testLease,
		RequestTimeout: time.Second, CheckInterval: 100 * time.Millisecond}
	r := &replica{Elector: New(cfg, client, probe, prometheus.NewGauge(prometheus.GaugeOpts{Name: "leading"}), log),
		client: client, done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = cancel
	go probe.Run(ctx)
	go func() {
		defer close(r.done)
		r.Campaign(ctx, r.serve)
	}()
	t.Cleanup(func() { r.stop(); <-r.done })
	return r
}

func (r *replica) serve(t *Term) {
	r.mu.Lock()
	r.terms++
	r.mu.Unlock()
	<-t.Context().Done()
}

// kill stops the replica the way kill -9 does: its lease is neither revoked
// nor kept alive, so its election key stays until the lease expires.
func (r *replica) kill() {
	r.client.Close()
	r.stop()
	<-r.done
}

func waitRole(t *testing.T, r *replica, want Role, within time.Duration) {
	t.Helper()
	polltest.Every(t, within, 10*time.Millisecond, fmt.Sprintf("role %d", want), func() error {
		if got := r.Role(); got != want {
			return fmt.Errorf("role %d", got)
		}
		return nil
	})
}

// compactNow writes a few keys and compacts etcd to its current revision,
// so that any watch from an earlier revision is refused.
func compactNow(t *testing.T, etcd *etcdtest.Server) {
	t.Helper()
	var rev int64
	for i := range 10 {
		rev = etcd.Put(t, fmt.Sprintf("/filler/%d", i), "x")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := etcd.Client.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil {
		t.Fatalf("compact: %v", err)
	}
}

// revokeLease ends a replica's session from outside, as etcd does when
// the lease expires while the replica cannot reach it.
func revokeLease(t *testing.T, etcd *etcdtest.Server, r *replica) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := etcd.Client.Get(ctx, testPrefix+"/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range resp.Kvs {
		if string(kv.Key) != leaderKeyOf(t, etcd) {
			if _, err := etcd.Client.Revoke(ctx, clientv3.LeaseID(kv.Lease)); err != nil {
				t.Fatalf("revoke: %v", err)
			}
		}
	}
}

// leaderKeyOf returns the election key with the lowest create revision.
func leaderKeyOf(t *testing.T, etcd *etcdtest.Server) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := etcd.Client.Get(ctx, testPrefix+"/", append(clientv3.WithFirstCreate(), clientv3.WithPrefix())...)
	if err != nil || len(resp.Kvs) == 0 {
		t.Fatalf("no leader key: %v", err)
	}
	return string(resp.Kvs[0].Key)
}

func TestAStandbyWhoseSessionLapsedLeadsWithinTheLeaseAfterACompaction(t *testing.T) {
	etcd, pki := startEtcd(t)
	a := startReplica(t, etcd, pki, "a")
	waitRole(t, a, Leading, 10*time.Second)
	b := startReplica(t, etcd, pki, "b")
	waitRole(t, b, Standby, 10*time.Second)

	revokeLease(t, etcd, b)
	compactNow(t, etcd)
	begin := time.Now()
	a.kill()
	waitRole(t, b, Leading, testLease+time.Second)
	t.Logf("the standby leads %v after the leader died", time.Since(begin).Round(time.Millisecond))
}

func TestAStandbyLeadsWithinTheLeaseAfterAnOutageLongerThanTheLeaseAndACompaction(t *testing.T) {
	etcd, pki := startEtcd(t)
	a := startReplica(t, etcd, pki, "a")
	waitRole(t, a, Leading, 10*time.Second)
	b := startReplica(t, etcd, pki, "b")
	waitRole(t, b, Standby, 10*time.Second)

	a.kill()
	url := etcd.ClientURL()
	etcd.Stop()
	polltest.Every(t, 3*testLease, 10*time.Millisecond, "the standby's session lapses", func() error {
		if d := b.probe.UnreachableFor(); d < testLease+500*time.Millisecond {
			return fmt.Errorf("etcd unreachable for %v only", d)
		}
		return nil
	})
	etcd.Restart(t, url)
	begin := time.Now()
	compactNow(t, etcd)
	// etcd renews every lease when it starts, so the dead leader's key
	// lives one more lease.
	waitRole(t, b, Leading, testLease+time.Second)
	t.Logf("the standby leads %v after etcd is back", time.Since(begin).Round(time.Millisecond))
}

func TestAStandbyWhoseKeyWasDeletedLeadsOnlyWithAKeyOfItsOwn(t *testing.T) {
	etcd, pki := startEtcd(t)
	a := startReplica(t, etcd, pki, "a")
	waitRole(t, a, Leading, 10*time.Second)
	b := startReplica(t, etcd, pki, "b")
	waitRole(t, b, Standby, 10*time.Second)
	standbyKey := lastElectionKey(t, etcd)
	etcd.Delete(t, standbyKey)

	begin := time.Now()
	a.kill()
	waitRole(t, b, Leading, testLease+time.Second)
	t.Logf("the standby leads %v after the leader died", time.Since(begin).Round(time.Millisecond))
	term, err := b.Wait(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if term.Fence().Key == standbyKey || term.Fence().Key != lastElectionKey(t, etcd) {
		t.Fatalf("leading with election key %s; the deleted one was %s, the one in etcd %s",
			term.Fence().Key, standbyKey, lastElectionKey(t, etcd))
	}
}

// lastElectionKey returns the election key created last.
func lastElectionKey(t *testing.T, etcd *etcdtest.Server) string {
	t.Helper()
	resp, err := etcd.Client.Get(t.Context(), testPrefix+"/", clientv3.WithLastCreate()...)
	if err != nil || len(resp.Kvs) == 0 {
		t.Fatalf("no election key: %v", err)
	}
	return string(resp.Kvs[0].Key)
}
