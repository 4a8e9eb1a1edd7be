package integration

import (
	"context"
	"testing"
	"time"
)

// TestKube2SkyRestartCollectsGarbage stops kube2sky, deletes and creates
// Services while it is down, and starts it again: the deleted Services'
// keys are gone, the new ones are served, and keys written by hand (no
// owner) are untouched, even one inside a deleted Service's subtree.
func TestKube2SkyRestartCollectsGarbage(t *testing.T) {
	t.Parallel() // idle for long stretches; safe beside the other parallel tests (own stack)
	s := startStack(t, stackOptions{})
	const ns = "gc"
	createNamespace(t, s.kube, ns)
	createService(t, s.kube, ns, "keep", "10.96.20.10")
	createService(t, s.kube, ns, "gone", "10.96.20.11")
	expectWithin(t, s.skydns.DNSAddr, expectTimeout,
		aRecords(serviceName(ns, "keep"), "10.96.20.10"), aRecords(serviceName(ns, "gone"), "10.96.20.11"))
	hand := map[string]string{
		"/skydns/local/cluster/svc/gc/gone/manual": `{"host":"10.1.2.3"}`, // inside a Service kube2sky will collect
		"/skydns/local/cluster/svc/gc/handmade/x":  `{"host":"10.1.2.4"}`, // a name no Service explains
	}
	before := putHandKeys(t, s, hand)
	expectWithin(t, s.skydns.DNSAddr, expectTimeout, aRecords(serviceName(ns, "handmade"), "10.1.2.4"),
		aRecords(serviceName(ns, "gone"), "10.96.20.11", "10.1.2.3"))

	s.kube2sky.Process.Stop()
	deleteService(t, s.kube, ns, "gone")
	createService(t, s.kube, ns, "fresh", "10.96.20.12")
	t.Run("while kube2sky is down the records do not change", func(t *testing.T) {
		err := holdsNow(t.Context(), s.skydns.DNSAddr,
			aRecords(serviceName(ns, "gone"), "10.96.20.11", "10.1.2.3"), aRecords(serviceName(ns, "fresh")))
		if err != nil {
			t.Fatal(err)
		}
	})

	s.kube2sky.Process.Start()
	s.kube2sky.WaitReady(time.Minute)
	t.Run("after the restart the new Service is served and the deleted one's keys are gone", func(t *testing.T) {
		expectWithin(t, s.skydns.DNSAddr, expectTimeout,
			aRecords(serviceName(ns, "fresh"), "10.96.20.12"),
			aRecords(serviceName(ns, "gone"), "10.1.2.3"),
			aRecords(serviceName(ns, "keep"), "10.96.20.10"),
			expectation{Qname: "11.20.96.10.in-addr.arpa.", Qtype: "PTR", Rcode: "NXDOMAIN"},
			expectation{Qname: "_http._tcp." + serviceName(ns, "gone"), Qtype: "SRV", Rcode: "NXDOMAIN"})
	})
	t.Run("hand-written keys keep their values and revisions", func(t *testing.T) {
		after := readKeys(t, s, hand)
		for key, kv := range before {
			if got := after[key]; got == nil || string(got.Value) != string(kv.Value) || got.ModRevision != kv.ModRevision {
				t.Errorf("%s: was %q at revision %d, now %v", key, kv.Value, kv.ModRevision, got)
			}
		}
	})
}

// putHandKeys writes keys into the DNS etcd as a person with etcdctl
// would, and returns them as stored.
func putHandKeys(t *testing.T, s *stack, keys map[string]string) map[string]*kv {
	t.Helper()
	for key, value := range keys {
		s.dnsEtcd.Ctl("put", key, value)
	}
	return readKeys(t, s, keys)
}

// kv is a key's value and last modification revision.
type kv struct {
	Value       []byte
	ModRevision int64
}

// readKeys reads the named keys; absent keys are missing from the result.
func readKeys(t *testing.T, s *stack, keys map[string]string) map[string]*kv {
	t.Helper()
	out := map[string]*kv{}
	for key := range keys {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		resp, err := s.dnsEtcd.Client().Get(ctx, key)
		cancel()
		if err != nil {
			t.Fatalf("reading %s: %v", key, err)
		}
		if len(resp.Kvs) == 1 {
			out[key] = &kv{Value: resp.Kvs[0].Value, ModRevision: resp.Kvs[0].ModRevision}
		}
	}
	return out
}
