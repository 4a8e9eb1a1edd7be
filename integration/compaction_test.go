package integration

import (
	"context"
	"testing"
	"time"

	"github.com/kubesky/kubesky/integration/harness"
)

// TestDNSEtcdCompaction compacts and defragments the DNS etcd while skydns
// watches it: first under a live watch, then while skydns's connection is
// cut, so that its watch resumes from a compacted revision and it has to
// list again. Either way no put or delete is missed.
func TestDNSEtcdCompaction(t *testing.T) {
	t.Parallel() // idle for long stretches; safe beside the other parallel tests (own stack)
	s := startStack(t, stackOptions{proxySkyDNS: true, skydnsArgs: []string{"--etcd-probe-interval=200ms"}})
	const ns = "compact"
	createNamespace(t, s.kube, ns)
	createService(t, s.kube, ns, "a", "10.96.22.10")
	createService(t, s.kube, ns, "b", "10.96.22.11")
	createService(t, s.kube, ns, "c", "10.96.22.12")
	expectWithin(t, s.skydns.DNSAddr, expectTimeout, aRecords(serviceName(ns, "a"), "10.96.22.10"),
		aRecords(serviceName(ns, "b"), "10.96.22.11"), aRecords(serviceName(ns, "c"), "10.96.22.12"))

	t.Run("changes after a compaction and defrag under a live watch are seen", func(t *testing.T) {
		s.dnsEtcd.Compact()
		s.dnsEtcd.Defrag()
		deleteService(t, s.kube, ns, "a")
		createService(t, s.kube, ns, "d", "10.96.22.13")
		s.dnsEtcd.Ctl("put", "/skydns/local/cluster/svc/compact/hand1/x", `{"host":"10.1.3.1"}`)
		expectWithin(t, s.skydns.DNSAddr, expectTimeout, aRecords(serviceName(ns, "a")),
			aRecords(serviceName(ns, "d"), "10.96.22.13"), aRecords(serviceName(ns, "hand1"), "10.1.3.1"))
	})

	t.Run("changes made while skydns was cut off and then compacted away are seen after a re-list", func(t *testing.T) {
		lists := s.skydns.Metric("skydns_etcd_lists_total")
		s.etcdProxy.Block()
		harness.Eventually(t, 10*time.Second, func() error { return wantDisconnected(s.skydns) })
		deleteService(t, s.kube, ns, "b")
		createService(t, s.kube, ns, "e", "10.96.22.14")
		s.dnsEtcd.Ctl("put", "/skydns/local/cluster/svc/compact/hand2/x", `{"host":"10.1.3.2"}`)
		s.dnsEtcd.Ctl("del", "/skydns/local/cluster/svc/compact/hand1/x")
		waitForKeys(t, s, "/skydns/local/cluster/svc/compact/e/", "/skydns/local/cluster/svc/compact/b/")
		s.dnsEtcd.Compact()
		s.dnsEtcd.Defrag()
		s.etcdProxy.Unblock()

		s.skydns.WaitReady(30 * time.Second)
		expectWithin(t, s.skydns.DNSAddr, expectTimeout,
			aRecords(serviceName(ns, "b")), aRecords(serviceName(ns, "hand1")),
			aRecords(serviceName(ns, "e"), "10.96.22.14"), aRecords(serviceName(ns, "hand2"), "10.1.3.2"),
			aRecords(serviceName(ns, "c"), "10.96.22.12"), aRecords(serviceName(ns, "d"), "10.96.22.13"))
		if got := s.skydns.Metric("skydns_etcd_lists_total"); got <= lists {
			t.Errorf("skydns_etcd_lists_total %v after the compacted resume, want more than %v: the watch did not list again", got, lists)
		}
	})
}

// waitForKeys waits until kube2sky has written the present prefix and
// removed every key under the absent one, reading the DNS etcd directly.
func waitForKeys(t *testing.T, s *stack, present, absent string) {
	t.Helper()
	harness.Eventually(t, expectTimeout, func() error {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		return prefixState(ctx, s, present, absent)
	})
}
