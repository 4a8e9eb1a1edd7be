package kube2sky

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/kubesky/kubesky/kube2sky/group"
	clientv3 "go.etcd.io/etcd/client/v3"
)

var webRecords = []string{
	"/skydns/arpa/in-addr/10/96/0/10 " + v("web.default.svc.cluster.local."),
	svcKey + "default/web/4df22e82 " + v("10.96.0.10"),
}

// waitStandby waits until r is ready without leading.
func (h *harness) waitStandby(r *running) {
	h.t.Helper()
	h.eventually("the controller stands by", func() error {
		if r.Leading() {
			return errors.New("leading")
		}
		return r.Ready()
	})
}

func TestOnlyTheLeaderWrites(t *testing.T) {
	t.Parallel()
	h, a := startLeader(t)
	b := h.start("b")
	h.waitStandby(b)
	h.create(service("default", "web", []string{"10.96.0.10"}))
	h.waitContents(webRecords...)
	if err := a.resyncNow(t); err != nil {
		t.Fatal(err)
	}
	if got := txns(b); got != 0 {
		t.Errorf("the standby committed %v Txns", got)
	}
	if got := txns(a); got < 2 {
		t.Errorf("the leader committed %v Txns, want dns-version and web", got)
	}
	if b.Leading() || value(b.metrics.leader) != 0 || value(a.metrics.leader) != 1 {
		t.Errorf("leader gauges: a %v, b %v", value(a.metrics.leader), value(b.metrics.leader))
	}
}

func TestAStandbyTakesOverWithinTheLeaseTTLWhenTheLeaderDies(t *testing.T) {
	h, a := startLeader(t)
	b := h.start("b")
	h.waitStandby(b)

	// The leader dies: its etcd connection goes away without resigning, so
	// its lease must expire.
	died := time.Now()
	a.client.Close()
	h.eventually("b leads", func() error {
		if !b.Leading() {
			return errors.New("b is not leading")
		}
		return nil
	})
	took := time.Since(died)
	t.Logf("took over %v after the leader died (lease TTL 2s)", took)
	if took > 3*time.Second {
		t.Errorf("takeover took %v, want within the 2s lease TTL (plus etcd's expiry check)", took)
	}
	h.create(service("default", "web", []string{"10.96.0.10"}))
	h.waitContents(webRecords...)
}

// TestAStoppedLeaderHandsOverAtOnce stops the leader cleanly, as SIGTERM
// does: before Run returns, its election key is gone (its lease revoked),
// and the standby leads at once, not after the 30 s lease TTL.
func TestAStoppedLeaderHandsOverAtOnce(t *testing.T) {
	const ttl = 30 * time.Second
	longLease := func(c *Config) { c.LeaseDuration = ttl }
	h := newHarness(t)
	a := h.start("a", longLease)
	h.waitLeader(a)
	b := h.start("b", longLease)
	h.waitStandby(b)
	// A replica is standby before its campaign has written its key.
	var keys []string
	h.eventually("the leader's and the standby's election keys", func() error {
		if keys = electionKeys(t, h, a.cfg.electionPrefix()); len(keys) != 2 {
			return fmt.Errorf("election keys %v", keys)
		}
		return nil
	})

	stopped := time.Now()
	a.stop()
	// The leader's election key is deleted before Run returns.
	if left := electionKeys(t, h, a.cfg.electionPrefix()); len(left) != 1 || left[0] != keys[1] {
		t.Fatalf("election keys after the stop %v, want only the standby's %s", left, keys[1])
	}
	// The standby leads at once, well before the lease TTL.
	h.waitLeader(b)
	took := time.Since(stopped)
	t.Logf("handover %v after the stop began (lease TTL %v)", took, ttl)
	if took > 2*time.Second {
		t.Errorf("handover after a clean stop took %v, want well under the %v lease TTL", took, ttl)
	}
	if a.err != nil {
		t.Errorf("Run returned %v after a clean stop", a.err)
	}
}

// electionKeys lists the keys under an election prefix, oldest first (the
// leader's first).
func electionKeys(t *testing.T, h *harness, prefix string) []string {
	t.Helper()
	resp, err := h.etcd.Client.Get(t.Context(), prefix+"/", clientv3.WithPrefix(),
		clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, kv := range resp.Kvs {
		keys = append(keys, string(kv.Key))
	}
	return keys
}

func TestAWriteAfterLeadershipIsLostIsRejected(t *testing.T) {
	t.Parallel()
	h, a := startLeader(t)
	// Someone deletes the election key: a still believes it leads, but its
	// fence no longer holds.
	if _, err := h.etcd.Client.Delete(t.Context(), a.cfg.electionPrefix()+"/", clientv3.WithPrefix()); err != nil {
		t.Fatal(err)
	}
	before := txns(a)
	h.create(service("default", "web", []string{"10.96.0.10"}))
	h.eventually("the fenced write fails", func() error {
		if failures(a, failNotLeader) == 0 {
			return errors.New("no not_leader failure yet")
		}
		return nil
	})
	// It campaigns again, wins, and writes.
	h.waitContents(webRecords...)
	if txns(a) == before {
		t.Error("no Txn committed after re-election")
	}
}

func TestAnEtcdOutageIsRetriedNotFatal(t *testing.T) {
	t.Parallel()
	t.Run("without leader election, writes are retried until etcd is back", func(t *testing.T) {
		h := newHarness(t)
		a := h.start("a", func(c *Config) { c.LeaderElect = false; c.Etcd.RequestTimeout = 500 * time.Millisecond })
		h.waitLeader(a)
		url := h.etcd.ClientURL()
		h.etcd.Stop()
		h.eventually("readyz reports etcd down", func() error { return notReady(a) })
		h.create(service("default", "web", []string{"10.96.0.10"}))
		h.eventually("a reconcile failed and was requeued", func() error {
			if a.queue.NumRequeues(group.ServiceKey("default", "web")) == 0 {
				return errors.New("no retry yet")
			}
			return nil
		})
		h.etcd.Restart(t, url)
		h.waitContents(webRecords...)
		h.waitReady(a)
		stillRunning(t, a)
	})
	t.Run("with leader election, an outage longer than the lease ends the term and a new one begins", func(t *testing.T) {
		h := newHarness(t)
		a := h.start("a", func(c *Config) { c.Etcd.RequestTimeout = 500 * time.Millisecond })
		h.waitLeader(a)
		url := h.etcd.ClientURL()
		h.etcd.Stop()
		h.create(service("default", "web", []string{"10.96.0.10"}))
		h.eventually("the lease is given up", func() error {
			if a.Leading() {
				return errors.New("still leading")
			}
			return nil
		})
		h.etcd.Restart(t, url)
		h.waitLeader(a)
		h.waitContents(webRecords...)
		stillRunning(t, a)
	})
}

func notReady(r *running) error {
	if r.Ready() == nil {
		return errors.New("still ready")
	}
	return nil
}

func stillRunning(t *testing.T, r *running) {
	t.Helper()
	select {
	case <-r.done:
		t.Fatalf("Run returned during the outage: %v", r.err)
	default:
	}
}

func TestTwoReplicasStartedTogetherAreBothReady(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := h.start("a")
	b := h.start("b")
	h.waitReady(a)
	h.waitReady(b)
	if a.Leading() == b.Leading() {
		t.Errorf("a leading %v, b leading %v: want exactly one leader", a.Leading(), b.Leading())
	}
}
