package kube2sky

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	grpcbackoff "google.golang.org/grpc/backoff"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/polltest"
)

const testOwner = "kube2sky.cluster.local"

// harness is an embedded etcd and a fake API server for controllers under
// test.
type harness struct {
	t        testing.TB
	etcd     *etcdtest.Server
	kube     *fake.Clientset
	watchers atomic.Int32
	rv       atomic.Int64
}

func newHarness(t testing.TB, objects ...any) *harness {
	t.Helper()
	h := &harness{t: t, etcd: etcdtest.Start(t), kube: fake.NewClientset()}
	h.kube.PrependWatchReactor("*", func(a clienttesting.Action) (bool, watch.Interface, error) {
		w, err := h.kube.Tracker().Watch(a.GetResource(), a.GetNamespace())
		if err == nil {
			h.watchers.Add(1)
		}
		return true, w, err
	})
	for _, o := range objects {
		h.add(o)
	}
	return h
}

// add puts an object straight into the fake API server's store, which is
// much faster than create for the thousands of objects of a benchmark.
func (h *harness) add(obj any) {
	h.t.Helper()
	o, ok := obj.(interface {
		runtime.Object
		SetResourceVersion(string)
	})
	if !ok {
		h.t.Fatalf("cannot add %T", obj)
	}
	o.SetResourceVersion(h.nextRV())
	if err := h.kube.Tracker().Add(o); err != nil {
		h.t.Fatalf("add: %v", err)
	}
}

// startLeader starts a harness and one controller, "a", and waits until it
// leads and has reconciled.
func startLeader(t *testing.T) (*harness, *running) {
	t.Helper()
	h := newHarness(t)
	r := h.start("a")
	h.waitLeader(r)
	return h, r
}

// running is a controller running in the background.
type running struct {
	*Controller
	client *clientv3.Client
	cancel context.CancelFunc
	done   chan struct{} // closed when Run returned
	err    error         // what Run returned
}

func testConfig(url string) Config {
	cfg := DefaultConfig()
	cfg.Etcd.Endpoints = []string{url}
	cfg.Etcd.RequestTimeout = 2 * time.Second
	cfg.Workers = 2
	cfg.ResyncPeriod = time.Hour
	cfg.LeaseDuration = 2 * time.Second
	cfg.probeInterval = 50 * time.Millisecond
	return cfg
}

// start runs a controller with its own etcd client and waits until its
// informers watch. It is stopped when the test ends.
func (h *harness) start(name string, mods ...func(*Config)) *running {
	h.t.Helper()
	cfg := testConfig(h.etcd.ClientURL())
	cfg.Identity = name
	for _, m := range mods {
		m(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		h.t.Fatalf("test config: %v", err)
	}
	client := h.newClient()
	log := slog.New(slog.NewTextHandler(h.t.Output(), &slog.HandlerOptions{Level: slog.LevelInfo})).With("replica", name)
	c, err := New(cfg, h.kube, client, log)
	if err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{Controller: c, client: client, cancel: cancel, done: make(chan struct{})}
	before := h.watchers.Load()
	go func() {
		r.err = c.Run(ctx)
		close(r.done)
	}()
	h.t.Cleanup(r.stop)
	h.eventually("the informers watch", func() error {
		if h.watchers.Load() < before+2 {
			return fmt.Errorf("%d watches", h.watchers.Load()-before)
		}
		return nil
	})
	return r
}

// newClient returns an etcd client that reconnects within half a second
// after an outage (gRPC's default backoff grows to minutes).
func (h *harness) newClient() *clientv3.Client {
	h.t.Helper()
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{h.etcd.ClientURL()},
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
		DialOptions: []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
			Backoff: grpcbackoff.Config{BaseDelay: 50 * time.Millisecond, Multiplier: 1.6, MaxDelay: 500 * time.Millisecond},
		})},
	})
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { c.Close() })
	return c
}

// stop stops the controller and waits for Run to return.
func (r *running) stop() {
	r.cancel()
	select {
	case <-r.done:
	case <-time.After(15 * time.Second):
		panic("controller did not stop within 15s")
	}
}

func (h *harness) waitReady(r *running) {
	h.t.Helper()
	h.eventually("the controller is ready", r.Ready)
}

func (h *harness) waitLeader(r *running) {
	h.t.Helper()
	h.eventually("the controller leads and has reconciled", func() error {
		if !r.Leading() {
			return fmt.Errorf("not leading")
		}
		return r.Ready()
	})
}

// eventually polls cond every 10ms until it returns nil, failing the test
// after 10s with the last error.
func (h *harness) eventually(what string, cond func() error) {
	h.t.Helper()
	polltest.Every(h.t, 10*time.Second, 10*time.Millisecond, what, cond)
}

// dump returns every key under the zone and the reverse tree as sorted
// "key value" lines.
func (h *harness) dump() []string {
	h.t.Helper()
	var out []string
	for _, prefix := range []string{"/skydns/local/cluster/", "/skydns/arpa/"} {
		resp, err := h.etcd.Client.Get(h.t.Context(), prefix, clientv3.WithPrefix())
		if err != nil {
			h.t.Fatalf("get %s: %v", prefix, err)
		}
		for _, kv := range resp.Kvs {
			out = append(out, string(kv.Key)+" "+string(kv.Value))
		}
	}
	slices.Sort(out)
	return out
}

// waitContents waits until etcd holds exactly want (plus dns-version).
func (h *harness) waitContents(want ...string) {
	h.t.Helper()
	want = append(want, dnsVersion)
	slices.Sort(want)
	h.eventually("etcd holds the expected records", func() error {
		if got := h.dump(); !slices.Equal(got, want) {
			return fmt.Errorf("\n got:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
		return nil
	})
}

const dnsVersion = `/skydns/local/cluster/dns-version {"text":"1.1.0","ttl":30,"owner":"kube2sky.cluster.local"}`

// v returns the stored value of a record with host and an optional port.
func v(host string, port ...int) string {
	r := contract.Record{Host: host, TTL: 30, Owner: testOwner}
	if len(port) > 0 {
		r.Port = port[0]
	}
	return string(r.Encode())
}

func txns(r *running) float64 { return value(r.metrics.txns) }

func failures(r *running, reason string) float64 {
	return value(r.metrics.txnFailures.WithLabelValues(reason))
}

// value reads a counter, gauge or histogram count.
func value(m prometheus.Metric) float64 {
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		panic(err)
	}
	switch {
	case d.Counter != nil:
		return d.Counter.GetValue()
	case d.Gauge != nil:
		return d.Gauge.GetValue()
	case d.Histogram != nil:
		return float64(d.Histogram.GetSampleCount())
	}
	return 0
}

// API objects.

func (h *harness) nextRV() string { return fmt.Sprint(h.rv.Add(1)) }

func (h *harness) create(obj any) {
	h.t.Helper()
	var err error
	switch o := obj.(type) {
	case *corev1.Service:
		o.ResourceVersion = h.nextRV()
		_, err = h.kube.CoreV1().Services(o.Namespace).Create(context.Background(), o, metav1.CreateOptions{})
	case *discoveryv1.EndpointSlice:
		o.ResourceVersion = h.nextRV()
		_, err = h.kube.DiscoveryV1().EndpointSlices(o.Namespace).Create(context.Background(), o, metav1.CreateOptions{})
	default:
		h.t.Fatalf("cannot create %T", obj)
	}
	if err != nil {
		h.t.Fatalf("create: %v", err)
	}
}

func (h *harness) update(obj any) {
	h.t.Helper()
	var err error
	switch o := obj.(type) {
	case *corev1.Service:
		o.ResourceVersion = h.nextRV()
		_, err = h.kube.CoreV1().Services(o.Namespace).Update(context.Background(), o, metav1.UpdateOptions{})
	case *discoveryv1.EndpointSlice:
		o.ResourceVersion = h.nextRV()
		_, err = h.kube.DiscoveryV1().EndpointSlices(o.Namespace).Update(context.Background(), o, metav1.UpdateOptions{})
	default:
		h.t.Fatalf("cannot update %T", obj)
	}
	if err != nil {
		h.t.Fatalf("update: %v", err)
	}
}

func (h *harness) deleteService(ns, name string) {
	h.t.Helper()
	if err := h.kube.CoreV1().Services(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		h.t.Fatalf("delete service: %v", err)
	}
}

func (h *harness) deleteSlice(ns, name string) {
	h.t.Helper()
	if err := h.kube.DiscoveryV1().EndpointSlices(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		h.t.Fatalf("delete slice: %v", err)
	}
}

func service(ns, name string, ips []string, ports ...corev1.ServicePort) *corev1.Service {
	ip := ""
	if len(ips) > 0 {
		ip = ips[0]
	}
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: ip, ClusterIPs: ips, Ports: ports},
	}
}

func headless(ns, name string, ports ...corev1.ServicePort) *corev1.Service {
	return service(ns, name, []string{"None"}, ports...)
}

func tcp(name string, port int32) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Protocol: corev1.ProtocolTCP, Port: port}
}

type ep struct {
	ip       string
	hostname string
	ready    bool
}

func endpointSlice(ns, svc, name string, port *discoveryv1.EndpointPort, eps ...ep) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	if port != nil {
		s.Ports = []discoveryv1.EndpointPort{*port}
	}
	for _, e := range eps {
		out := discoveryv1.Endpoint{Addresses: []string{e.ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(e.ready)}}
		if e.hostname != "" {
			out.Hostname = ptr.To(e.hostname)
		}
		s.Endpoints = append(s.Endpoints, out)
	}
	return s
}

func slicePort(name string, port int32) *discoveryv1.EndpointPort {
	return &discoveryv1.EndpointPort{Name: ptr.To(name), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(port)}
}

// histogramSum reads the sum of a histogram.
func histogramSum(m prometheus.Metric) float64 {
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		panic(err)
	}
	return d.GetHistogram().GetSampleSum()
}

// prometheusMetric is what value reads.
type prometheusMetric = prometheus.Metric

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// putLine writes a "key value" line into etcd.
func putLine(h *harness, line string) {
	h.t.Helper()
	key, value, _ := strings.Cut(line, " ")
	h.etcd.Put(h.t, key, value)
}

// resyncNow runs a full reconcile in the current term and returns its error.
func (r *running) resyncNow(t testing.TB) error {
	t.Helper()
	reply := make(chan error, 1)
	select {
	case r.resyncRequests <- reply:
	case <-time.After(10 * time.Second):
		t.Fatal("no term accepted a resync request within 10s")
	}
	return <-reply
}
