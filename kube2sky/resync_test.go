package kube2sky

import (
	"testing"

	"github.com/kubesky/kubesky/kube2sky/group"
	corev1 "k8s.io/api/core/v1"
)

// threeServices creates a ClusterIP, a headless and an ExternalName Service
// and returns the records they make.
func threeServices(h *harness) []string {
	h.create(service("default", "web", []string{"10.96.0.10"}, tcp("http", 80)))
	h.create(headless("default", "db"))
	h.create(endpointSlice("default", "db", "db-1", nil, ep{"10.244.1.7", "db-0", true}))
	ext := service("default", "ext", nil)
	ext.Spec.Type, ext.Spec.ExternalName = corev1.ServiceTypeExternalName, "db.example.com"
	h.create(ext)
	return []string{
		"/skydns/arpa/in-addr/10/96/0/10 " + v("web.default.svc.cluster.local."),
		"/skydns/arpa/in-addr/10/244/1/7 " + v("db-0.db.default.svc.cluster.local."),
		svcKey + "default/web/4df22e82 " + v("10.96.0.10"),
		svcKey + "default/web/_tcp/_http/0093fc5f " + v("web.default.svc.cluster.local.", 80),
		svcKey + "default/db/db-0 " + v("10.244.1.7"),
		svcKey + "default/ext/2008691a " + v("db.example.com."),
	}
}

func TestAResyncOfAnUnchangedClusterWritesNothing(t *testing.T) {
	t.Parallel()
	h, r := startLeader(t)
	h.waitContents(threeServices(h)...)
	before := txns(r)
	if err := r.resyncNow(t); err != nil {
		t.Fatal(err)
	}
	reconciles := value(r.metrics.reconcileDuration.WithLabelValues("service").(prometheusMetric))
	r.queue.Add(group.ServiceKey("default", "web"))
	r.queue.Add(group.ServiceKey("default", "db"))
	h.eventually("both Services reconciled again", func() error {
		if got := value(r.metrics.reconcileDuration.WithLabelValues("service").(prometheusMetric)); got < reconciles+2 {
			return errorf("%v service reconciles", got-reconciles)
		}
		return nil
	})
	if got := txns(r); got != before {
		t.Errorf("a no-op resync and two no-op reconciles committed %v Txns", got-before)
	}
}

func TestAResyncRestoresAKeyDeletedByHand(t *testing.T) {
	t.Parallel()
	h, r := startLeader(t)
	want := threeServices(h)
	h.waitContents(want...)
	h.etcd.Delete(t, svcKey+"default/web/4df22e82")
	h.etcd.Delete(t, "/skydns/arpa/in-addr/10/244/1/7")
	h.etcd.Delete(t, "/skydns/local/cluster/dns-version")
	if err := r.resyncNow(t); err != nil {
		t.Fatal(err)
	}
	h.waitContents(want...)
}

func TestARestartRemovesOrphansAndKeepsHandWrittenKeys(t *testing.T) {
	t.Parallel()
	h, r := startLeader(t)
	want := threeServices(h)
	h.waitContents(want...)
	r.stop()

	// While kube2sky is down: db is deleted, and etcd gets hand-written
	// records and owned leftovers of a Service that is long gone.
	h.deleteService("default", "db")
	h.deleteSlice("default", "db-1")
	handWritten := []string{
		svcKey + `default/web/manual {"host":"192.0.2.1"}`,
		svcKey + `other/thing/x {"host":"192.0.2.2"}`,
		`/skydns/arpa/in-addr/192/0/2/1 {"host":"manual.example."}`,
		`/skydns/local/cluster/notes {"text":"not a record of kube2sky"}`,
	}
	for _, line := range handWritten {
		putLine(h, line)
	}
	putLine(h, svcKey+"gone/old/abc "+v("10.96.9.9"))
	putLine(h, "/skydns/arpa/in-addr/10/96/9/9 "+v("old.gone.svc.cluster.local."))
	putLine(h, "/skydns/local/cluster/stray "+v("10.0.0.1"))

	r2 := h.start("b", oneServiceAChunk)
	h.waitLeader(r2)
	h.waitContents(append([]string{want[0], want[2], want[3], want[5]}, handWritten...)...)
}

// oneServiceAChunk makes a full reconcile's Service pass take one Service
// at a time, so that keys fall between and after the chunks' Services.
func oneServiceAChunk(c *Config) { c.serviceChunk = 1 }

func TestARestartGivesEachPTRToItsWinnerAcrossServiceChunks(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, name := range []string{"a", "b", "c"} {
		h.create(headless("default", name))
		h.create(endpointSlice("default", name, name+"-1", nil, ep{"10.244.1.7", "", true}))
	}
	// What a replica that lost the race left: c's PTR, a's forward record
	// gone, a leftover of a Service that no longer exists between b and c.
	putLine(h, "/skydns/arpa/in-addr/10/244/1/7 "+v("10-244-1-7.c.default.svc.cluster.local."))
	putLine(h, svcKey+"default/bb/10-244-1-8 "+v("10.244.1.8"))
	r := h.start("a", oneServiceAChunk)
	h.waitLeader(r)
	h.waitContents(
		"/skydns/arpa/in-addr/10/244/1/7 "+v("10-244-1-7.a.default.svc.cluster.local."),
		svcKey+"default/a/10-244-1-7 "+v("10.244.1.7"),
		svcKey+"default/b/10-244-1-7 "+v("10.244.1.7"),
		svcKey+"default/c/10-244-1-7 "+v("10.244.1.7"),
	)
	h.deleteService("default", "a")
	h.waitContents(
		"/skydns/arpa/in-addr/10/244/1/7 "+v("10-244-1-7.b.default.svc.cluster.local."),
		svcKey+"default/b/10-244-1-7 "+v("10.244.1.7"),
		svcKey+"default/c/10-244-1-7 "+v("10.244.1.7"),
	)
}
