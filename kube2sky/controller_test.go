package kube2sky

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kubesky/kubesky/kube2sky/group"
	"github.com/kubesky/kubesky/kube2sky/records"
	"github.com/kubesky/kubesky/kube2sky/source"
	corev1 "k8s.io/api/core/v1"
)

const svcKey = "/skydns/local/cluster/svc/"

func TestAServiceIsWrittenUpdatedAndDeleted(t *testing.T) {
	t.Parallel()
	h, _ := startLeader(t)
	h.waitContents()

	web := service("default", "web", []string{"10.96.0.10"}, tcp("http", 80))
	h.create(web)
	h.waitContents(
		"/skydns/arpa/in-addr/10/96/0/10 "+v("web.default.svc.cluster.local."),
		svcKey+"default/web/4df22e82 "+v("10.96.0.10"),
		svcKey+"default/web/_tcp/_http/0093fc5f "+v("web.default.svc.cluster.local.", 80),
	)

	web.Spec.Ports = []corev1.ServicePort{tcp("https", 443), {Protocol: corev1.ProtocolUDP, Port: 53}}
	h.update(web)
	h.waitContents(
		"/skydns/arpa/in-addr/10/96/0/10 "+v("web.default.svc.cluster.local."),
		svcKey+"default/web/4df22e82 "+v("10.96.0.10"),
		svcKey+"default/web/_tcp/_https/"+records.HashLabel("web.default.svc.cluster.local.", 443)+" "+v("web.default.svc.cluster.local.", 443),
	)

	h.deleteService("default", "web")
	h.waitContents()
}

func TestAHeadlessServiceFollowsItsEndpointSlices(t *testing.T) {
	t.Parallel()
	h, _ := startLeader(t)
	h.create(headless("default", "db", tcp("pg", 5432)))
	slice := endpointSlice("default", "db", "db-abc", slicePort("pg", 15432),
		ep{"10.244.1.7", "db-0", true}, ep{"10.244.2.9", "", true}, ep{"10.244.3.3", "db-2", false})
	h.create(slice)
	ready := []string{
		"/skydns/arpa/in-addr/10/244/1/7 " + v("db-0.db.default.svc.cluster.local."),
		"/skydns/arpa/in-addr/10/244/2/9 " + v("10-244-2-9.db.default.svc.cluster.local."),
		svcKey + "default/db/10-244-2-9 " + v("10.244.2.9"),
		svcKey + "default/db/_tcp/_pg/10-244-2-9 " + v("10-244-2-9.db.default.svc.cluster.local.", 15432),
		svcKey + "default/db/_tcp/_pg/db-0 " + v("db-0.db.default.svc.cluster.local.", 15432),
		svcKey + "default/db/db-0 " + v("10.244.1.7"),
	}
	h.waitContents(ready...)

	slice.Endpoints[2].Conditions.Ready = ptrTo(true)
	h.update(slice)
	h.waitContents(append(ready,
		"/skydns/arpa/in-addr/10/244/3/3 "+v("db-2.db.default.svc.cluster.local."),
		svcKey+"default/db/_tcp/_pg/db-2 "+v("db-2.db.default.svc.cluster.local.", 15432),
		svcKey+"default/db/db-2 "+v("10.244.3.3"),
	)...)

	h.deleteSlice("default", "db-abc")
	h.waitContents()
}

// With --ignore-empty-services, a cluster IP Service's records follow its
// endpoints' readiness; with --endpoint-pod-names a headless endpoint
// without a hostname is named by its pod.
func TestCoreDNSsKubernetesOptions(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.start("a", func(c *Config) { c.IgnoreEmptyServices, c.EndpointPodNames = true, true })
	h.waitLeader(r)
	h.create(service("default", "web", []string{"10.96.0.10"}))
	h.create(headless("default", "db"))
	web := endpointSlice("default", "web", "web-abc", nil, ep{"10.244.1.1", "", false})
	h.create(web)
	db := endpointSlice("default", "db", "db-abc", nil, ep{"10.244.2.9", "", true})
	db.Endpoints[0].TargetRef = &corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "db-7f9c"}
	h.create(db)
	dbRecords := []string{
		"/skydns/arpa/in-addr/10/244/2/9 " + v("db-7f9c.db.default.svc.cluster.local."),
		svcKey + "default/db/db-7f9c " + v("10.244.2.9"),
	}
	h.waitContents(dbRecords...)

	web.Endpoints[0].Conditions.Ready = ptrTo(true)
	h.update(web)
	h.waitContents(append(dbRecords,
		"/skydns/arpa/in-addr/10/96/0/10 "+v("web.default.svc.cluster.local."),
		svcKey+"default/web/4df22e82 "+v("10.96.0.10"))...)

	h.deleteSlice("default", "web-abc")
	h.waitContents(dbRecords...)
}

func TestAnExternalNameServiceIsACNAME(t *testing.T) {
	t.Parallel()
	h, _ := startLeader(t)
	ext := service("default", "ext", nil)
	ext.Spec.Type, ext.Spec.ExternalName = corev1.ServiceTypeExternalName, "db.example.com"
	h.create(ext)
	h.waitContents(svcKey + "default/ext/" + records.HashLabel("db.example.com.", 0) + " " + v("db.example.com."))
}

func TestAPTRClaimedByTwoServicesGoesToTheFirstAndPassesOn(t *testing.T) {
	t.Parallel()
	h, _ := startLeader(t)
	h.create(headless("default", "b"))
	h.create(endpointSlice("default", "b", "b-1", nil, ep{"10.244.1.7", "", true}))
	ptrB := "/skydns/arpa/in-addr/10/244/1/7 " + v("10-244-1-7.b.default.svc.cluster.local.")
	ptrA := "/skydns/arpa/in-addr/10/244/1/7 " + v("10-244-1-7.a.default.svc.cluster.local.")
	aRecord := svcKey + "default/a/10-244-1-7 " + v("10.244.1.7")
	bRecord := svcKey + "default/b/10-244-1-7 " + v("10.244.1.7")
	h.waitContents(ptrB, bRecord)

	h.create(headless("default", "a"))
	h.create(endpointSlice("default", "a", "a-1", nil, ep{"10.244.1.7", "", true}))
	h.waitContents(ptrA, aRecord, bRecord)

	h.deleteService("default", "a")
	h.waitContents(ptrB, bRecord)

	h.deleteSlice("default", "b-1")
	h.waitContents()
}

func TestAHandWrittenRecordInTheWayIsLeftAlone(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.etcd.Put(t, svcKey+"default/web/4df22e82", `{"host":"192.0.2.1"}`)
	h.etcd.Put(t, svcKey+"default/web/manual", `{"host":"192.0.2.2"}`)
	r := h.start("a")
	h.waitLeader(r)
	h.create(service("default", "web", []string{"10.96.0.10"}))
	h.waitContents(
		"/skydns/arpa/in-addr/10/96/0/10 "+v("web.default.svc.cluster.local."),
		svcKey+`default/web/4df22e82 {"host":"192.0.2.1"}`,
		svcKey+`default/web/manual {"host":"192.0.2.2"}`,
	)
	if got := value(r.metrics.foreignKeys); got < 1 {
		t.Errorf("foreign keys skipped = %v, want at least 1", got)
	}
	h.deleteService("default", "web")
	h.waitContents(svcKey+`default/web/4df22e82 {"host":"192.0.2.1"}`, svcKey+`default/web/manual {"host":"192.0.2.2"}`)
}

func TestAnInvalidPortIsCountedAndTheRestIsWritten(t *testing.T) {
	t.Parallel()
	h, r := startLeader(t)
	h.create(service("default", "web", []string{"10.96.0.10"}, tcp("Bad_Name", 1), tcp("ok", 2)))
	h.waitContents(
		"/skydns/arpa/in-addr/10/96/0/10 "+v("web.default.svc.cluster.local."),
		svcKey+"default/web/4df22e82 "+v("10.96.0.10"),
		svcKey+"default/web/_tcp/_ok/"+records.HashLabel("web.default.svc.cluster.local.", 2)+" "+v("web.default.svc.cluster.local.", 2),
	)
	if got := value(r.metrics.invalidObjects.WithLabelValues("Service")); got != 1 {
		t.Errorf("invalid objects = %v, want 1", got)
	}
	if err := r.resyncNow(t); err != nil {
		t.Fatal(err)
	}
	if got := value(r.metrics.invalidObjects.WithLabelValues("Service")); got != 1 {
		t.Errorf("after a resync, invalid objects = %v, want still 1 (each problem counted once)", got)
	}
}

func TestAnInvalidServiceAndEndpointSliceEachGetAnEvent(t *testing.T) {
	t.Parallel()
	h, _ := startLeader(t)
	svc := service("default", "web", []string{"10.96.0.10"}, tcp("Bad_Name", 1))
	svc.UID = "uid-web"
	h.create(svc)
	h.create(headless("default", "db"))
	sl := endpointSlice("default", "db", "db-a", nil, ep{ip: "127.0.0.1", ready: true}, ep{ip: "10.244.1.7", ready: true})
	sl.UID = "uid-db-a"
	h.create(sl)
	ev := h.waitEvent("default", "Service", "web", source.ReasonInvalidForDNS)
	if ev.Type != corev1.EventTypeWarning || ev.InvolvedObject.UID != "uid-web" || !strings.Contains(ev.Message, `spec.ports[0] "Bad_Name/TCP/1"`) {
		t.Errorf("event on the Service: %s %s %q", ev.Type, ev.InvolvedObject.UID, ev.Message)
	}
	ev = h.waitEvent("default", "EndpointSlice", "db-a", source.ReasonInvalidForDNS)
	if ev.InvolvedObject.APIVersion != "discovery.k8s.io/v1" || ev.InvolvedObject.UID != "uid-db-a" ||
		!strings.Contains(ev.Message, `endpoints[0].addresses[0] "127.0.0.1": a loopback address`) {
		t.Errorf("event on the EndpointSlice: %s %s %q", ev.InvolvedObject.APIVersion, ev.InvolvedObject.UID, ev.Message)
	}
}

func TestAServiceTooBigForOneTxnIsWrittenInSeveral(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.start("a", func(c *Config) { c.MaxTxnOps = 8 })
	h.waitLeader(r)
	before := txns(r)
	h.create(headless("default", "big"))
	var eps []ep
	var want []string
	for i := range 10 {
		ip := fmt.Sprintf("10.244.0.%d", i+1)
		eps = append(eps, ep{ip, "", true})
		dashed := fmt.Sprintf("10-244-0-%d", i+1)
		want = append(want,
			fmt.Sprintf("/skydns/arpa/in-addr/10/244/0/%d %s", i+1, v(dashed+".big.default.svc.cluster.local.")),
			svcKey+"default/big/"+dashed+" "+v(ip),
			svcKey+"default/big/_tcp/_p/"+dashed+" "+v(dashed+".big.default.svc.cluster.local.", 9))
	}
	h.create(endpointSlice("default", "big", "big-1", slicePort("p", 9), eps...))
	h.waitContents(want...)
	if got := txns(r) - before; got != 5 {
		t.Errorf("30 records with 7 per Txn took %v Txns, want 5", got)
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestAFailingGroupIsRetriedAtMostTwoSecondsApart: after any number of
// failures (an etcd outage) a group's next reconcile is at most
// maxRetryGap away, so a change made during the outage is written soon
// after etcd returns; the first retries come sooner.
func TestAFailingGroupIsRetriedAtMostTwoSecondsApart(t *testing.T) {
	limiter := retryLimiter()
	key := group.Key{Name: "default/web"}
	var gaps []time.Duration
	for range 40 {
		gaps = append(gaps, limiter.When(key))
	}
	if gaps[0] != 100*time.Millisecond || gaps[1] != 200*time.Millisecond {
		t.Errorf("first retries after %v and %v, want 100ms and 200ms", gaps[0], gaps[1])
	}
	if last := gaps[len(gaps)-1]; last != maxRetryGap {
		t.Errorf("after 40 failures the retry is %v away, want %v", last, maxRetryGap)
	}
}
