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
const outage = 20 * time.Second

// TestDNSEtcdOutage stops the DNS etcd for 20 seconds. Meanwhile skydns
// keeps answering every name it knew from its last snapshot and says
// "stale" on /readyz, while Services are deleted and created. Once etcd is
// back, kube2sky's retries write those changes and skydns serves them.
func TestDNSEtcdOutage(t *testing.T) {
	t.Parallel() // idle for long stretches; safe beside the other parallel tests (own stack)
	s := startStack(t, stackOptions{skydnsArgs: []string{"--etcd-probe-interval=200ms"}})
	const ns = "outage"
	createNamespace(t, s.kube, ns)
	createService(t, s.kube, ns, "a", "10.96.21.10")
	createService(t, s.kube, ns, "b", "10.96.21.11")
	known := []expectation{aRecords(serviceName(ns, "a"), "10.96.21.10"), aRecords(serviceName(ns, "b"), "10.96.21.11")}
	eventually(t, s.skydns.DNSAddr, expectTimeout, known...)

	s.dnsEtcd.Stop()
	down := time.Now()
	deleteService(t, s.kube, ns, "b")
	createService(t, s.kube, ns, "c", "10.96.21.12")
	t.Run("skydns reports stale on readyz while etcd is down", func(t *testing.T) {
		harness.Eventually(t, 10*time.Second, func() error { return wantNotReady(&s.skydns.Daemon, "stale") })
	})
	t.Run("skydns answers every known name for as long as etcd is down", func(t *testing.T) {
		queries := keepAnswering(t, s, down.Add(outage), known)
		t.Logf("%d rounds of queries answered from the last snapshot during the %v outage", queries, outage)
	})
	t.Run("kube2sky reports etcd unreachable on readyz", func(t *testing.T) {
		// Its probe notices within its interval plus a request timeout (7 s).
		harness.Eventually(t, 10*time.Second, func() error { return wantNotReady(&s.kube2sky.Daemon, "etcd unreachable") })
	})

	s.dnsEtcd.Restart()
	up := time.Now()
	t.Run("skydns is ready again once etcd is back", func(t *testing.T) {
		s.skydns.WaitReady(30 * time.Second)
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
		eventually(t, s.skydns.DNSAddr, 90*time.Second,
			aRecords(serviceName(ns, "c"), "10.96.21.12"), aRecords(serviceName(ns, "b")), known[0])
		t.Logf("changes visible %v after etcd came back", time.Since(up).Round(time.Millisecond))
	})
	t.Run("kube2sky is ready again", func(t *testing.T) {
		s.kube2sky.WaitReady(30 * time.Second)
	})
}

// keepAnswering queries the known names over UDP and TCP until the
// deadline, checking that each answer is right and /readyz stays 503, and
// returns how many rounds it made.
func keepAnswering(t *testing.T, s *stack, deadline time.Time, known []expectation) int {
	t.Helper()
	rounds := 0
	for time.Now().Before(deadline) {
		if err := holdsNow(t.Context(), s.skydns.DNSAddr, known...); err != nil {
			t.Fatalf("after %d rounds: %v", rounds, err)
		}
		if err := wantNotReady(&s.skydns.Daemon, "stale"); err != nil {
			t.Fatalf("after %d rounds: %v", rounds, err)
		}
		rounds++
		time.Sleep(100 * time.Millisecond) // pacing the checks, not waiting for a condition
	}
	return rounds
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
