package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/miekg/dns"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kubesky/kubesky/integration/harness"
)

// bulkRecords is how many records TestSkyDNSRestart puts in etcd so that
// listing them takes a moment.
const bulkRecords = 5000

// TestSkyDNSRestart restarts skydns while its etcd is cut off, so that the
// window between "serving DNS" and "mirror synced" is long enough to see:
// /readyz is 503 during it, and from the first 200 on every known name is
// answered right — no SERVFAIL, no NXDOMAIN — over UDP and TCP.
func TestSkyDNSRestart(t *testing.T) {
	t.Parallel() // idle for long stretches; safe beside the other parallel tests (own stack)
	s := startStack(t, stackOptions{proxySkyDNS: true})
	const ns = "restart"
	createNamespace(t, s.kube, ns)
	createService(t, s.kube, ns, "web", "10.96.24.10")
	known := append(putBulk(t, s, bulkRecords), aRecords(serviceName(ns, "web"), "10.96.24.10"))
	expectWithin(t, s.skydns.DNSAddr, expectTimeout, known[len(known)-1], known[0], known[bulkRecords-1])

	s.skydns.Process.Stop()
	s.etcdProxy.Block()
	s.skydns.Process.Start()
	t.Run("until the mirror has listed etcd, readyz is 503 and known names get SERVFAIL", func(t *testing.T) {
		var m *dns.Msg
		harness.Eventually(t, 30*time.Second, func() (err error) {
			m, err = harness.Query(s.skydns.DNSAddr, "udp", serviceName(ns, "web"), dns.TypeA)
			return err // DNS serves before the mirror is synced
		})
		if m.Rcode != dns.RcodeServerFailure {
			t.Errorf("before the mirror is synced a known name gets %s, want SERVFAIL (not a false NXDOMAIN)", dns.RcodeToString[m.Rcode])
		}
		if err := wantNotReady(&s.skydns.Daemon, "not synced"); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("after readyz turns 200 every known name is answered", func(t *testing.T) {
		stop := make(chan struct{})
		results := probeWhileSyncing(t, s, known, stop)
		s.etcdProxy.Unblock()
		s.skydns.WaitReady(30 * time.Second)
		ready := time.Now()
		for _, e := range sample(known, 200) {
			if err := holdsNow(t.Context(), s.skydns.DNSAddr, e); err != nil {
				t.Errorf("right after ready: %v", err)
			}
		}
		close(stop)
		checkAfterReady(t, <-results, ready)
	})
}

// probeResult is one query asked while skydns was becoming ready.
type probeResult struct {
	sent time.Time
	err  error
}

// probeWhileSyncing asks random known names in a loop until stop closes,
// and delivers every result.
func probeWhileSyncing(t *testing.T, s *stack, known []expectation, stop <-chan struct{}) <-chan []probeResult {
	out := make(chan []probeResult, 1)
	go func() {
		var results []probeResult
		defer func() { out <- results }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			e := known[rand.IntN(len(known))]
			sent := time.Now()
			results = append(results, probeResult{sent: sent, err: holdsNow(context.Background(), s.skydns.DNSAddr, e)})
		}
	}()
	return out
}

// checkAfterReady fails for every query sent after skydns was seen ready
// that did not get the right answer, and logs what happened before.
func checkAfterReady(t *testing.T, results []probeResult, ready time.Time) {
	t.Helper()
	var before, wrongBefore, after int
	for _, r := range results {
		if r.sent.Before(ready) {
			before++
			if r.err != nil {
				wrongBefore++
			}
			continue
		}
		after++
		if r.err != nil {
			t.Errorf("sent %v after ready: %v", r.sent.Sub(ready), r.err)
		}
	}
	t.Logf("%d queries before ready (%d not yet answered right), %d after ready, all right", before, wrongBefore, after)
	if after == 0 {
		t.Error("no query was sent after ready")
	}
}

// putBulk writes n records under the restart namespace straight into etcd,
// as another writer would, and returns their expectations.
func putBulk(t *testing.T, s *stack, n int) []expectation {
	t.Helper()
	const perTxn = 100 // below etcd's default --max-txn-ops of 128
	var es []expectation
	var ops []clientv3.Op
	for i := range n {
		ip := fmt.Sprintf("10.78.%d.%d", i/250, i%250+1)
		key := fmt.Sprintf("/skydns/local/cluster/svc/restart/bulk-%d/x", i)
		ops = append(ops, clientv3.OpPut(key, fmt.Sprintf(`{"host":%q}`, ip)))
		es = append(es, aRecords(serviceName("restart", fmt.Sprintf("bulk-%d", i)), ip))
		if len(ops) == perTxn || i == n-1 {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			_, err := s.dnsEtcd.Client().Txn(ctx).Then(ops...).Commit()
			cancel()
			if err != nil {
				t.Fatalf("bulk put: %v", err)
			}
			ops = ops[:0]
		}
	}
	return es
}

// sample returns up to n expectations picked at random.
func sample(es []expectation, n int) []expectation {
	picked := make([]expectation, 0, n)
	for range n {
		picked = append(picked, es[rand.IntN(len(es))])
	}
	return picked
}
