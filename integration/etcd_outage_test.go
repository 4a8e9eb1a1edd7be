package integration

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kubesky/kubesky/integration/harness"
)

// outage is how long TestDNSEtcdOutage keeps the DNS etcd down.
const outage = 30 * time.Second

// maxStale is the --max-stale of the bounded replica of TestDNSEtcdOutage.
const maxStale = 5 * time.Second

// TestDNSEtcdOutage stops the DNS etcd, which two skydns replicas share,
// for 30 seconds. Meanwhile both stay ready (an outage of a shared etcd
// must not empty the kube-dns Service) and answer every name they knew
// from their last snapshot, while skydns_snapshot_stale_seconds rises; a
// third replica started with --max-stale=5s turns unready after 5 s and
// keeps answering. Services are deleted and created meanwhile; once etcd
// is back, kube2sky's retries write those changes, skydns serves them,
// the staleness falls back and the bounded replica is ready again.
func TestDNSEtcdOutage(t *testing.T) {
	t.Parallel() // idle for long stretches; safe beside the other parallel tests (own stack)
	const probe = "--etcd-probe-interval=200ms"
	s := startStack(t, stackOptions{skydnsArgs: []string{probe}})
	replicas := []*harness.SkyDNS{s.skydns, harness.StartSkyDNS(t, s.dnsEtcd.Endpoint, probe)}
	bounded := harness.StartSkyDNS(t, s.dnsEtcd.Endpoint, probe, "--max-stale="+maxStale.String())
	const ns = "outage"
	createNamespace(t, s.kube, ns)
	createService(t, s.kube, ns, "a", "10.96.21.10")
	createService(t, s.kube, ns, "b", "10.96.21.11")
	known := []expectation{aRecords(serviceName(ns, "a"), "10.96.21.10"), aRecords(serviceName(ns, "b"), "10.96.21.11")}
	for _, r := range append(replicas, bounded) {
		expectWithin(t, r.DNSAddr, expectTimeout, known...)
	}

	down := time.Now()
	s.dnsEtcd.Stop()
	deleteService(t, s.kube, ns, "b")
	createService(t, s.kube, ns, "c", "10.96.21.12")
	t.Run("every replica stays ready and answers every known name for as long as etcd is down", func(t *testing.T) {
		o := watchOutage(t, replicas, bounded, down.Add(outage), known)
		t.Logf("%d rounds of queries to %d replicas answered from their snapshots during the %v outage; "+
			"skydns_snapshot_stale_seconds reached %.1f", o.rounds, len(replicas)+1, outage, o.maxStale)
		if o.maxStale < (outage - 2*time.Second).Seconds() {
			t.Errorf("skydns_snapshot_stale_seconds reached %.1f, want about the %v outage", o.maxStale, outage)
		}
		if o.boundedUnready.IsZero() {
			t.Fatalf("the --max-stale=%v replica never turned unready", maxStale)
		}
		after := o.boundedUnready.Sub(down)
		t.Logf("the --max-stale=%v replica turned unready %v after etcd stopped", maxStale, after.Round(100*time.Millisecond))
		if after < maxStale-time.Second {
			t.Errorf("the --max-stale=%v replica turned unready after only %v", maxStale, after)
		}
	})
	t.Run("verbose readyz says etcd is unreachable", func(t *testing.T) {
		code, body, err := s.skydns.Get("/readyz?verbose")
		if err != nil || code != http.StatusOK || !strings.Contains(body, "etcd unreachable since") {
			t.Errorf("/readyz?verbose: %d %q %v", code, body, err)
		}
	})
	t.Run("kube2sky reports etcd unreachable on readyz", func(t *testing.T) {
		// Its probe notices within its interval plus a request timeout (7 s).
		harness.Eventually(t, 10*time.Second, func() error { return wantNotReady(&s.kube2sky.Daemon, "etcd unreachable") })
	})

	s.dnsEtcd.Restart()
	up := time.Now()
	t.Run("the staleness falls back once etcd is back", func(t *testing.T) {
		for _, r := range append(replicas, bounded) {
			harness.Eventually(t, 30*time.Second, func() error { return wantFresh(r) })
		}
		t.Logf("every replica confirmed current %v after etcd came back", time.Since(up).Round(time.Millisecond))
	})
	t.Run("the --max-stale replica is ready again", func(t *testing.T) {
		bounded.WaitReady(30 * time.Second)
	})
	t.Run("kube2sky leads again within seconds, not after its own stale lease expires", func(t *testing.T) {
		// Regression test: the lease revoke at the end of the lost term
		// fails while etcd is down, and etcd renews every lease when it
		// restarts; kube2sky must revoke that stale lease once etcd answers
		// instead of standing by behind its own election key for a lease TTL.
		harness.Eventually(t, 5*time.Second, func() error { return wantLeading(s.kube2sky) })
		t.Logf("leading again %v after etcd came back", time.Since(up).Round(time.Millisecond))
	})
	t.Run("changes made during the outage propagate once etcd is back", func(t *testing.T) {
		for _, r := range replicas {
			expectWithin(t, r.DNSAddr, 90*time.Second,
				aRecords(serviceName(ns, "c"), "10.96.21.12"), aRecords(serviceName(ns, "b")), known[0])
		}
		t.Logf("changes visible %v after etcd came back", time.Since(up).Round(time.Millisecond))
	})
	t.Run("kube2sky is ready again", func(t *testing.T) {
		s.kube2sky.WaitReady(30 * time.Second)
	})
}

// outageSeen is what watchOutage saw.
type outageSeen struct {
	rounds         int
	maxStale       float64   // the highest skydns_snapshot_stale_seconds of the replicas
	boundedUnready time.Time // when the --max-stale replica was first seen unready
}

// watchOutage queries the known names on every replica and the bounded
// one over UDP and TCP until the deadline, checking that each answer is
// right and that the replicas stay ready, and records the staleness and
// when the bounded replica turned unready.
func watchOutage(t *testing.T, replicas []*harness.SkyDNS, bounded *harness.SkyDNS, deadline time.Time, known []expectation) outageSeen {
	t.Helper()
	var o outageSeen
	for ; time.Now().Before(deadline); o.rounds++ {
		for _, r := range append(replicas, bounded) {
			if err := holdsNow(t.Context(), r.DNSAddr, known...); err != nil {
				t.Fatalf("round %d: %v", o.rounds, err)
			}
		}
		for _, r := range replicas {
			if err := r.Ready(); err != nil {
				t.Fatalf("round %d: %v", o.rounds, err)
			}
			o.maxStale = max(o.maxStale, r.Metric("skydns_snapshot_stale_seconds"))
		}
		if o.boundedUnready.IsZero() && wantNotReady(&bounded.Daemon, "stale: snapshot last confirmed current by etcd") == nil {
			o.boundedUnready = time.Now()
		}
		time.Sleep(100 * time.Millisecond) // pacing the checks, not waiting for a condition
	}
	return o
}

// wantFresh returns nil once etcd confirmed r's snapshot within the last
// second (its probe runs every 200ms).
func wantFresh(r *harness.SkyDNS) error {
	m, err := r.Metrics()
	if err != nil {
		return err
	}
	if v, ok := m["skydns_snapshot_stale_seconds"]; !ok || v >= 1 {
		return fmt.Errorf("%s: skydns_snapshot_stale_seconds %v (present %v), want under 1", r.Process.Name(), v, ok)
	}
	return nil
}

// wantDisconnected returns nil once skydns has noticed that etcd does
// not answer (skydns_etcd_connected 0).
func wantDisconnected(r *harness.SkyDNS) error {
	m, err := r.Metrics()
	if err != nil {
		return err
	}
	if v, ok := m["skydns_etcd_connected"]; !ok || v != 0 {
		return fmt.Errorf("%s: skydns_etcd_connected %v (present %v), want 0", r.Process.Name(), v, ok)
	}
	return nil
}

// wantNotReady returns nil when the daemon's /readyz answers 503 with a
// body containing reason.
func wantNotReady(d *harness.Daemon, reason string) error {
	code, body, err := d.Get("/readyz")
	if err != nil {
		return err
	}
	if code != http.StatusServiceUnavailable || !strings.Contains(body, reason) {
		return fmt.Errorf("%s /readyz: %d %q, want 503 saying %q", d.Process.Name(), code, strings.TrimSpace(body), reason)
	}
	return nil
}

// wantLeading returns nil when the replica's kube2sky_leader gauge is 1.
func wantLeading(k *harness.Kube2Sky) error {
	leading, err := k.Leading()
	if err != nil {
		return err
	}
	if !leading {
		return fmt.Errorf("%s is not leading", k.Process.Name())
	}
	return nil
}
