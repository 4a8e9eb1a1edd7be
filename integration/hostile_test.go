package integration

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubesky/kubesky/integration/harness"
	"github.com/kubesky/kubesky/kube2sky/records"
)

// The hostile-input test: objects at and past the limits, created for real
// through the API server, against two kube2sky processes: one in
// cluster.local, one in a zone of 205 characters where the longest legal
// Kubernetes names make DNS names over 253 characters. What the API server
// itself rejects is logged here and covered by kube2sky/records's unit tests.

// convergeTimeout bounds every wait for kube2sky to reach the right records.
const convergeTimeout = 60 * time.Second

// hostileZone is the 205-character zone of the second kube2sky.
var hostileZone = strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + ".cluster.local"

// writer is one kube2sky process and the zone it writes.
type writer struct {
	name    string
	zone    records.Zone
	process *harness.Kube2Sky
	pid     int
}

type hostile struct {
	s       *stack
	writers []*writer
}

func TestHostileObjects(t *testing.T) {
	s := startStack(t, stackOptions{})
	long := harness.StartKube2Sky(t, s.api.Kubeconfig, s.dnsEtcd.Endpoint, "--zone="+hostileZone, "--prefix=/hostile")
	h := &hostile{s: s, writers: []*writer{
		{name: "cluster.local", zone: records.NewZone("cluster.local", "/skydns", 30, "kube2sky.cluster.local"), process: s.kube2sky},
		{name: "the long zone", zone: records.NewZone(hostileZone, "/hostile", 30, "kube2sky."+hostileZone), process: long},
	}}
	for _, w := range h.writers {
		w.pid = w.process.Process.PID()
	}
	t.Run("the longest legal names are written up to 253 characters, and reported past them", h.longestNames)
	t.Run("a Service with 1000 named TCP and UDP ports gets 1000 SRV records", h.thousandPorts)
	t.Run("duplicate, wrong-family and unusable endpoint addresses are no A records", h.endpointAddresses)
	t.Run("odd port names get no SRV record", h.oddPortNames)
	t.Run("a slice of a missing Service has no records until the Service exists", h.missingService)
	t.Run("a Service changing type every 100 ms converges to its final type's records", h.flappingType)
	t.Run("kube2sky counted the rejected objects in its metrics", h.problemsCounted)
	t.Run("kube2sky never exited nor restarted, and every key it wrote is valid", h.checkAlive)
}

// checkAlive checks that both kube2sky processes still run with their
// first PIDs and that every key under both prefixes is valid.
func (h *hostile) checkAlive(t *testing.T) {
	t.Helper()
	for _, w := range h.writers {
		if err := w.process.Process.ErrIfExited(); err != nil {
			t.Errorf("kube2sky in %s: %v", w.name, err)
		} else if pid := w.process.Process.PID(); pid != w.pid {
			t.Errorf("kube2sky in %s restarted: pid %d, was %d", w.name, pid, w.pid)
		}
	}
	h.checkAllKeys(t)
}

// checkAllKeys lists each writer's whole prefix and checks every key and
// value with records.Zone.CheckKeyValue, skipping the leader election keys,
// which are not records.
func (h *hostile) checkAllKeys(t *testing.T) {
	t.Helper()
	for _, w := range h.writers {
		prefix := w.zone.Prefix() + "/"
		resp, err := h.s.dnsEtcd.Client().Get(t.Context(), prefix, clientv3.WithPrefix())
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range resp.Kvs {
			if strings.HasPrefix(string(kv.Key), prefix+"_kube2sky/") {
				continue
			}
			if err := w.zone.CheckKeyValue(string(kv.Key), kv.Value); err != nil {
				t.Errorf("kube2sky in %s wrote an invalid record: %v (value %s)", w.name, err, kv.Value)
			}
		}
		t.Logf("%s: %d keys under %s, all valid", w.name, len(resp.Kvs), prefix)
	}
}

func (h *hostile) longestNames(t *testing.T) {
	ns := label63("n")
	createNamespace(t, h.s.kube, ns)
	svc := label63("s")
	h.create(t, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: svc},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "abcdefghijklmno", Protocol: corev1.ProtocolSCTP, Port: 9}}},
	})
	headless := label63("t")
	h.create(t, selectorlessHeadless(ns, headless))
	h.tryCreate(t, ipv4Slice(ns, headless, "long-ports", []string{"abcdefghijklmno", label63("p")}, endpoint("10.5.0.1", label63("h"))))
	h.converge(t, ns, svc, headless)
	h.checkReported(t, ns, svc, headless)
}

func (h *hostile) thousandPorts(t *testing.T) {
	const ns = "ports"
	createNamespace(t, h.s.kube, ns)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "many"}}
	for i := range 1000 {
		protocol := []corev1.Protocol{corev1.ProtocolTCP, corev1.ProtocolUDP}[i%2]
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: fmt.Sprintf("p%d", i), Protocol: protocol, Port: int32(1 + i)})
	}
	h.create(t, svc)
	h.converge(t, ns, "many")
	for _, w := range h.writers {
		want := h.want(t, w.zone, ns, "many")
		if len(want) != 1002 {
			t.Errorf("%s: %d records, want an A, a PTR and 1000 SRV", w.name, len(want))
		}
	}
}

// hostileAddresses are endpoint addresses a DNS server must not answer
// with, each with the address type of the slice it is tried in.
var hostileAddresses = []struct{ addressType, addr string }{
	{"IPv4", "0.0.0.0"}, {"IPv4", "127.0.0.1"}, {"IPv4", "169.254.0.1"}, {"IPv4", "224.0.0.1"},
	{"IPv4", "239.1.2.3"}, {"IPv4", "255.255.255.255"}, {"IPv4", "10.001.0.1"}, {"IPv4", "fd00::1"},
	{"IPv6", "10.1.0.9"}, {"IPv6", "::ffff:10.1.0.8"}, {"IPv6", "::"}, {"IPv6", "::1"}, {"IPv6", "fe80::1"},
	{"IPv6", "ff05::1"},
}

func (h *hostile) endpointAddresses(t *testing.T) {
	const ns = "addrs"
	createNamespace(t, h.s.kube, ns)
	h.create(t, selectorlessHeadless(ns, "db", corev1.ServicePort{Name: "pg", Port: 5432}))
	dup := ipv4Slice(ns, "db", "dups", []string{"pg"}, endpoint("10.1.0.1", ""), endpoint("10.1.0.1", ""), endpoint("10.1.0.1", "db-0"))
	dup.Endpoints[1].Addresses = []string{"10.1.0.1", "10.1.0.1"}
	h.create(t, dup)
	h.create(t, ipv4Slice(ns, "db", "dups-again", []string{"pg"}, endpoint("10.1.0.1", "")))
	var accepted []string
	for i, a := range hostileAddresses {
		s := ipv4Slice(ns, "db", fmt.Sprintf("hostile-%d", i), []string{"pg"}, endpoint(a.addr, ""))
		s.AddressType = discoveryv1.AddressType(a.addressType)
		if h.tryCreate(t, s) {
			accepted = append(accepted, a.addr)
		}
	}
	t.Logf("the API server accepted %d of %d hostile addresses: %q", len(accepted), len(hostileAddresses), accepted)
	h.converge(t, ns, "db")
	h.checkReported(t, ns, "db")
	for _, w := range h.writers {
		for key, value := range h.etcdRecords(t, w.zone, ns, "db") {
			for _, addr := range accepted {
				if strings.Contains(value, `"host":"`+addr+`"`) {
					t.Errorf("%s: %s = %s answers with %s", w.name, key, value, addr)
				}
			}
		}
	}
}

func (h *hostile) oddPortNames(t *testing.T) {
	const ns = "portnames"
	createNamespace(t, h.s.kube, ns)
	for _, name := range []string{"pört", "HTTP", "ｈｔｔｐ", "h_t"} {
		h.tryCreate(t, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "svc-" + fmt.Sprint(len(name))},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: name, Port: 80}}},
		})
	}
	h.create(t, selectorlessHeadless(ns, "odd"))
	// The last two are valid, but an SRV name with the 63-character one is
	// too long in the long zone.
	for i, name := range []string{"pört", "HTTP", "Http", "ｈｔｔｐ", "h_t", "http\u200b", "ok", label63("p")} {
		h.tryCreate(t, ipv4Slice(ns, "odd", fmt.Sprintf("odd-%d", i), []string{name}, endpoint(fmt.Sprintf("10.2.0.%d", i+1), "")))
	}
	h.converge(t, ns, "odd")
	h.checkReported(t, ns, "odd")
}

func (h *hostile) missingService(t *testing.T) {
	const ns = "ghost"
	createNamespace(t, h.s.kube, ns)
	h.create(t, ipv4Slice(ns, "ghost", "ghost-a", nil, endpoint("10.3.0.1", "g0")))
	// A Service created after the slice is a barrier: once its records are
	// there, kube2sky has seen the slice too.
	h.create(t, selectorlessHeadless(ns, "barrier"))
	h.create(t, ipv4Slice(ns, "barrier", "barrier-a", nil, endpoint("10.3.0.2", "b0")))
	h.converge(t, ns, "barrier")
	for _, w := range h.writers {
		if got := h.etcdRecords(t, w.zone, ns, "ghost"); len(got) != 0 {
			t.Errorf("%s: records of a Service that does not exist: %v", w.name, got)
		}
	}
	h.create(t, selectorlessHeadless(ns, "ghost"))
	h.converge(t, ns, "ghost")
	for _, w := range h.writers {
		if got := h.etcdRecords(t, w.zone, ns, "ghost"); len(got) == 0 {
			t.Errorf("%s: no records once the Service exists", w.name)
		}
	}
}

// flapSpecs are the states a Service goes through, in an order the API
// server allows (a cluster IP cannot become None in place).
var flapSpecs = []corev1.ServiceSpec{
	{Type: corev1.ServiceTypeExternalName, ExternalName: "flap.example.com"},
	{Type: corev1.ServiceTypeClusterIP, ClusterIP: corev1.ClusterIPNone},
	{Type: corev1.ServiceTypeExternalName, ExternalName: "other.example.com"},
	{Type: corev1.ServiceTypeNodePort},
	{Type: corev1.ServiceTypeClusterIP},
}

func (h *hostile) flappingType(t *testing.T) {
	const ns, name = "flap", "flap"
	createNamespace(t, h.s.kube, ns)
	h.create(t, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: flapSpec(4)})
	h.create(t, ipv4Slice(ns, name, "flap-a", []string{"http"}, endpoint("10.4.0.1", "f0")))
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	end := time.Now().Add(5 * time.Second)
	updates := 0
	for i := 0; time.Now().Before(end); i++ {
		<-tick.C
		if err := h.setSpec(t, ns, name, flapSpec(i)); err != nil {
			t.Fatalf("update %d to %s: %v", i, flapSpec(i).Type, err)
		}
		updates++
	}
	t.Logf("%d type changes in 5 s", updates)
	if updates < 25 {
		t.Errorf("only %d updates in 5 s", updates)
	}
	h.converge(t, ns, name)
	h.checkAllKeys(t)
}

func flapSpec(i int) corev1.ServiceSpec {
	spec := flapSpecs[i%len(flapSpecs)]
	spec.Ports = []corev1.ServicePort{{Name: "http", Port: 80}}
	return spec
}

// setSpec replaces a Service's spec, keeping nothing of the old one but
// what the API server fills in itself.
func (h *hostile) setSpec(t *testing.T, ns, name string, spec corev1.ServiceSpec) error {
	svc, err := h.s.kube.CoreV1().Services(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	svc.Spec = spec
	_, err = h.s.kube.CoreV1().Services(ns).Update(t.Context(), svc, metav1.UpdateOptions{})
	return err
}

func (h *hostile) problemsCounted(t *testing.T) {
	for _, w := range h.writers {
		m, err := w.process.Metrics()
		if err != nil {
			t.Fatal(err)
		}
		for _, kind := range []string{"Service", "EndpointSlice"} {
			if got := m[`kube2sky_invalid_objects_total{kind="`+kind+`"}`]; got == 0 {
				t.Errorf("%s: kube2sky_invalid_objects_total{kind=%q} = 0", w.name, kind)
			}
		}
	}
}

// create creates a Service or an EndpointSlice, failing the test when the
// API server refuses it.
func (h *hostile) create(t *testing.T, obj any) {
	t.Helper()
	if err := h.createObject(t, obj); err != nil {
		t.Fatal(err)
	}
}

// tryCreate creates an object the API server may reject as invalid: it
// reports whether it was accepted, and logs the refusal.
func (h *hostile) tryCreate(t *testing.T, obj any) bool {
	t.Helper()
	err := h.createObject(t, obj)
	switch {
	case err == nil:
		return true
	case apierrors.IsInvalid(err):
		t.Logf("the API server rejects it (covered by kube2sky/records's unit tests): %v", err)
		return false
	}
	t.Fatal(err)
	return false
}

func (h *hostile) createObject(t *testing.T, obj any) error {
	var err error
	switch o := obj.(type) {
	case *corev1.Service:
		_, err = h.s.kube.CoreV1().Services(o.Namespace).Create(t.Context(), o, metav1.CreateOptions{})
	case *discoveryv1.EndpointSlice:
		_, err = h.s.kube.DiscoveryV1().EndpointSlices(o.Namespace).Create(t.Context(), o, metav1.CreateOptions{})
	default:
		t.Fatalf("cannot create %T", obj)
	}
	return err
}

// converge waits until etcd holds exactly the records records.Build makes
// of each Service as the API server has it now, in both zones.
func (h *hostile) converge(t *testing.T, ns string, names ...string) {
	t.Helper()
	for _, w := range h.writers {
		for _, name := range names {
			harness.Eventually(t, convergeTimeout, func() error {
				if err := w.process.Process.ErrIfExited(); err != nil {
					return err
				}
				return diffRecords(h.want(t, w.zone, ns, name), h.etcdRecords(t, w.zone, ns, name))
			})
		}
	}
}

// want returns the records of a Service as the API server has it now:
// keys and encoded values, the PTRs included; none when it does not exist.
func (h *hostile) want(t *testing.T, z records.Zone, ns, name string) map[string]string {
	t.Helper()
	entries, _ := h.build(t, z, ns, name)
	out := map[string]string{}
	for _, e := range entries {
		out[e.Key] = string(e.Record.Encode())
	}
	return out
}

// build runs records.Build on a Service and its slices as they are now.
func (h *hostile) build(t *testing.T, z records.Zone, ns, name string) ([]records.Entry, []records.Problem) {
	t.Helper()
	svc, err := h.s.kube.CoreV1().Services(ns).Get(t.Context(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		t.Fatal(err)
	}
	list, err := h.s.kube.DiscoveryV1().EndpointSlices(ns).List(t.Context(), metav1.ListOptions{
		LabelSelector: discoveryv1.LabelServiceName + "=" + name,
	})
	if err != nil {
		t.Fatal(err)
	}
	var slices []records.EndpointSlice
	for i := range list.Items {
		slices = append(slices, records.EndpointSliceFrom(&list.Items[i]))
	}
	return records.Build(z, records.ServiceFrom(svc), slices)
}

// etcdRecords returns what etcd holds in a Service's subtree and at the
// PTR keys naming it.
func (h *hostile) etcdRecords(t *testing.T, z records.Zone, ns, name string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, prefix := range []string{z.ServiceKeyPrefix(ns, name), z.ReverseKeyPrefix()} {
		resp, err := h.s.dnsEtcd.Client().Get(t.Context(), prefix, clientv3.WithPrefix())
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range resp.Kvs {
			out[string(kv.Key)] = string(kv.Value)
		}
	}
	maps.DeleteFunc(out, func(key, value string) bool {
		return z.IsReverseKey(key) && !ptrNames(z, value, ns, name)
	})
	return out
}

// ptrNames reports whether a PTR value's target is the Service or one of
// its endpoints.
func ptrNames(z records.Zone, value, ns, name string) bool {
	host, _, _ := strings.Cut(strings.TrimPrefix(value, `{"host":"`), `"`)
	gotNS, gotName, ok := z.ServiceOfTarget(host)
	return ok && gotNS == ns && gotName == name
}

// diffRecords describes how got differs from want, or returns nil.
func diffRecords(want, got map[string]string) error {
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if got[k] != want[k] {
			diffs = append(diffs, fmt.Sprintf("%s: have %q, want %q", k, got[k], want[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: have %q, want none", k, got[k]))
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	return fmt.Errorf("%d records differ (%d wanted), first: %s", len(diffs), len(want), strings.Join(diffs[:min(len(diffs), 3)], "; "))
}

// checkReported checks that every problem records.Build finds in each
// Service (in each zone) is a log line of that zone's kube2sky and that
// each object with a problem has a Warning event InvalidForDNS naming its
// UID. It fails when there is no problem at all: the callers expect some.
func (h *hostile) checkReported(t *testing.T, ns string, names ...string) {
	t.Helper()
	total := 0
	for _, w := range h.writers {
		for _, name := range names {
			_, problems := h.build(t, w.zone, ns, name)
			total += len(problems)
			for _, p := range problems {
				line := p.Object + ": " + p.Field
				harness.Eventually(t, convergeTimeout, func() error {
					if _, ok := w.process.Process.LogLine(line); !ok {
						return fmt.Errorf("%s: no log line names %s", w.name, line)
					}
					return h.hasEvent(t, p)
				})
			}
		}
	}
	if total == 0 {
		t.Errorf("no problem in %s/%v, the test expects some", ns, names)
	}
}

// hasEvent returns nil when the object of a problem has an InvalidForDNS
// event naming its UID.
func (h *hostile) hasEvent(t *testing.T, p records.Problem) error {
	ns, name, _ := strings.Cut(p.Object, "/")
	uid, err := h.uidOf(t, p.Kind, ns, name)
	if err != nil {
		return err
	}
	evs, err := h.s.kube.CoreV1().Events(ns).List(t.Context(), metav1.ListOptions{
		FieldSelector: "involvedObject.name=" + name + ",reason=InvalidForDNS",
	})
	if err != nil {
		return err
	}
	for _, ev := range evs.Items {
		if ev.InvolvedObject.Kind == p.Kind && ev.InvolvedObject.UID == uid && ev.Type == corev1.EventTypeWarning {
			return nil
		}
	}
	return fmt.Errorf("no InvalidForDNS event on %s %s (%d events by that name)", p.Kind, p.Object, len(evs.Items))
}

func (h *hostile) uidOf(t *testing.T, kind, ns, name string) (types.UID, error) {
	if kind == "EndpointSlice" {
		s, err := h.s.kube.DiscoveryV1().EndpointSlices(ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		return s.UID, nil
	}
	s, err := h.s.kube.CoreV1().Services(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	return s.UID, nil
}

// label63 returns a DNS label of exactly 63 characters starting with c.
func label63(c string) string { return c + strings.Repeat("x", 62) }

// selectorlessHeadless returns a headless Service without a selector: its
// EndpointSlices are the ones a test creates.
func selectorlessHeadless(ns, name string, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: ports},
	}
}

// ipv4Slice returns an IPv4 EndpointSlice of a Service with one TCP port
// (number 80 + its index) per name.
func ipv4Slice(ns, service, name string, portNames []string, endpoints ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: service}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   endpoints,
	}
	for i, p := range portNames {
		s.Ports = append(s.Ports, discoveryv1.EndpointPort{Name: ptr.To(p), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(int32(80 + i))})
	}
	return s
}

// endpoint returns a ready endpoint with one address and an optional
// hostname.
func endpoint(addr, hostname string) discoveryv1.Endpoint {
	e := discoveryv1.Endpoint{Addresses: []string{addr}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}
	if hostname != "" {
		e.Hostname = ptr.To(hostname)
	}
	return e
}
