package integration

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/kubesky/kubesky/integration/harness"
)

const (
	// churnDeadline is how long a change may take to become visible
	// through skydns before it counts as a failure.
	churnDeadline = 10 * time.Second
	// churnPollInterval is how often the change's name is asked.
	churnPollInterval = time.Millisecond
)

// churnKind is one sort of change; the churn cycles through churnKinds.
type churnKind int

const (
	churnCreate churnKind = iota // a new ClusterIP Service: its A record appears
	churnMove                    // a headless endpoint gets a new IP: its A record follows
	churnDelete                  // a preloaded headless Service is deleted: NXDOMAIN
	churnPort                    // a headless slice's port changes: its SRV records follow
)

var churnKinds = []churnKind{churnCreate, churnMove, churnDelete, churnPort}

func (k churnKind) String() string {
	return [...]string{
		"create a ClusterIP Service (A)",
		"move a headless endpoint to a new IP (A)",
		"delete a headless Service (NXDOMAIN)",
		"change a headless slice's port (SRV)",
	}[k]
}

// dnsCheck is the question whose answer shows a change, and the test of the
// answer.
type dnsCheck struct {
	qname string
	qtype uint16
	holds func(*dns.Msg) bool
}

// churnResult is what one change measured.
type churnResult struct {
	kind    churnKind
	service string        // the Service changed (each change has its own)
	acked   time.Time     // when the API acknowledged the write
	write   time.Duration // the API request's round trip
	visible time.Duration // from the acknowledgement to the first answer showing it
	err     error         // the write failed, or the answer never showed it
}

// churner makes the changes of part 3: each on a preloaded Service of its
// own, so no two changes race.
type churner struct {
	kube    kubernetes.Interface
	dnsAddr string
	next    atomic.Int64 // the next preloaded Service to take
}

// run makes total changes, one every interval (see openLoop), and returns
// every result and how long issuing took.
func (c *churner) run(ctx context.Context, total int, interval time.Duration) ([]churnResult, time.Duration) {
	return openLoop(ctx, total, interval, c.change)
}

// openLoop calls change for m = 0 … total−1, one every interval whatever
// the earlier ones are doing (an open loop), each in a goroutine of its
// own, and returns every result and how long issuing took.
func openLoop[R any](ctx context.Context, total int, interval time.Duration, change func(context.Context, int) R) ([]R, time.Duration) {
	results := make([]R, total)
	var wg sync.WaitGroup
	start := time.Now()
	for m := range total {
		time.Sleep(time.Until(start.Add(time.Duration(m) * interval))) // pacing, not waiting for a condition
		wg.Go(func() { results[m] = change(ctx, m) })
	}
	issued := time.Since(start)
	wg.Wait()
	return results, issued
}

// change makes change m and measures it.
func (c *churner) change(ctx context.Context, m int) churnResult {
	kind := churnKinds[m%len(churnKinds)]
	r := churnResult{kind: kind}
	begin := time.Now()
	check, err := c.write(ctx, kind, m, &r.service)
	r.acked = time.Now()
	r.write = r.acked.Sub(begin)
	if err != nil {
		r.err = err
		return r
	}
	seen, err := awaitAnswer(ctx, c.dnsAddr, check)
	r.visible, r.err = seen.Sub(r.acked), err
	return r
}

// write makes the API request of change m, sets the name of the Service
// it changes, and returns how to see it.
func (c *churner) write(ctx context.Context, kind churnKind, m int, service *string) (dnsCheck, error) {
	if kind == churnCreate {
		*service = churnServiceName(m)
		return c.createService(ctx, m)
	}
	i := int(c.next.Add(1) - 1)
	name := scaleServiceName(i)
	*service = name
	svcName := name + "." + scaleNamespace + ".svc.cluster.local."
	switch kind {
	case churnMove:
		ip := churnIP(m)
		patch := fmt.Sprintf(`[{"op":"replace","path":"/endpoints/0/addresses/0","value":%q}]`, ip)
		return dnsCheck{scaleHostname(0) + "." + svcName, dns.TypeA, func(msg *dns.Msg) bool { return answerHolds(msg, ip) }},
			c.patchSlice(ctx, name, patch)
	case churnDelete:
		err := c.kube.CoreV1().Services(scaleNamespace).Delete(ctx, name, metav1.DeleteOptions{})
		return dnsCheck{svcName, dns.TypeA, func(msg *dns.Msg) bool { return msg.Rcode == dns.RcodeNameError }}, err
	default: // churnPort
		port := uint16(9000 + m%1000)
		patch := fmt.Sprintf(`[{"op":"replace","path":"/ports/0/port","value":%d}]`, port)
		return dnsCheck{"_" + scalePortName + "._tcp." + svcName, dns.TypeSRV, func(msg *dns.Msg) bool { return srvPortsAre(msg, port) }},
			c.patchSlice(ctx, name, patch)
	}
}

// createService creates ClusterIP Service c-<m> with a named port.
func (c *churner) createService(ctx context.Context, m int) (dnsCheck, error) {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: churnServiceName(m), Namespace: scaleNamespace},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: scalePortName, Port: 80}}},
	}
	created, err := c.kube.CoreV1().Services(scaleNamespace).Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		return dnsCheck{}, err
	}
	ip := created.Spec.ClusterIP
	qname := created.Name + "." + scaleNamespace + ".svc.cluster.local."
	return dnsCheck{qname, dns.TypeA, func(msg *dns.Msg) bool { return answerHolds(msg, ip) }}, nil
}

// churnServiceName names the Service change m creates.
func churnServiceName(m int) string { return fmt.Sprintf("c-%05d", m) }

func (c *churner) patchSlice(ctx context.Context, name, patch string) error {
	_, err := c.kube.DiscoveryV1().EndpointSlices(scaleNamespace).Patch(ctx, name, types.JSONPatchType, []byte(patch), metav1.PatchOptions{})
	return err
}

// srvPortsAre reports whether msg has SRV answers, all with port.
func srvPortsAre(msg *dns.Msg, port uint16) bool {
	n := 0
	for _, rr := range msg.Answer {
		if srv, ok := rr.(*dns.SRV); ok {
			if srv.Port != port {
				return false
			}
			n++
		}
	}
	return n > 0
}

// awaitAnswer asks check's question over UDP every churnPollInterval until
// the answer holds, and returns when it first did; it gives up after
// churnDeadline.
func awaitAnswer(ctx context.Context, addr string, check dnsCheck) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, churnDeadline)
	defer cancel()
	tick := time.NewTicker(churnPollInterval)
	defer tick.Stop()
	for {
		if msg, err := harness.Query(addr, "udp", check.qname, check.qtype); err == nil && check.holds(msg) {
			return time.Now(), nil
		}
		select {
		case <-ctx.Done():
			return time.Now(), fmt.Errorf("%s %s: not visible within %v", check.qname, dns.TypeToString[check.qtype], churnDeadline)
		case <-tick.C:
		}
	}
}

// firstSeen notes when something happened first to each Service of
// scaleNamespace, as seen by a watch.
type firstSeen struct {
	mu    sync.Mutex
	first map[string]time.Time
	done  chan struct{} // closed when the watch has ended
}

func newFirstSeen() *firstSeen {
	return &firstSeen{first: map[string]time.Time{}, done: make(chan struct{})}
}

func (f *firstSeen) note(service string, t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, seen := f.first[service]; !seen {
		f.first[service] = t
	}
}

// sinceKey returns how long after acked key was first seen, if it was.
func (f *firstSeen) sinceKey(key string, acked time.Time) stageSeen {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.first[key]
	return stageSeen{after: t.Sub(acked), ok: ok}
}

// stageSeen is how long after a change's acknowledgement a stage saw it;
// ok is false when it did not.
type stageSeen struct {
	after time.Duration
	ok    bool
}

// watchRecords notes when the forward records of each Service first change
// in etcd (kube2sky's Txn seen by a watcher), until ctx ends.
func watchRecords(ctx context.Context, etcd *clientv3.Client) *firstSeen {
	return watchKeys(ctx, etcd, "/skydns/local/cluster/svc/"+scaleNamespace+"/")
}

// watchKeys notes when the keys under prefix first change in etcd, by the
// first path element after prefix, until ctx ends.
func watchKeys(ctx context.Context, etcd *clientv3.Client, prefix string) *firstSeen {
	f := newFirstSeen()
	events := etcd.Watch(clientv3.WithRequireLeader(ctx), prefix, clientv3.WithPrefix())
	go func() {
		defer close(f.done)
		for resp := range events {
			now := time.Now()
			for _, ev := range resp.Events {
				service, _, _ := strings.Cut(strings.TrimPrefix(string(ev.Kv.Key), prefix), "/")
				f.note(service, now)
			}
		}
	}()
	return f
}

// watchAPI notes when a watch of the API server first delivers an event of
// each Service or its EndpointSlice (of the same name), until ctx ends: the
// delay kube2sky's informers cannot beat.
func watchAPI(ctx context.Context, kube kubernetes.Interface) (*firstSeen, error) {
	f := newFirstSeen()
	// Watch from now on: a list's resource version, else every existing
	// object comes first as an ADDED event.
	list, err := kube.CoreV1().Services(scaleNamespace).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return nil, err
	}
	from := metav1.ListOptions{ResourceVersion: list.ResourceVersion}
	services, err := kube.CoreV1().Services(scaleNamespace).Watch(ctx, from)
	if err != nil {
		return nil, err
	}
	slices, err := kube.DiscoveryV1().EndpointSlices(scaleNamespace).Watch(ctx, from)
	if err != nil {
		services.Stop()
		return nil, err
	}
	var wg sync.WaitGroup
	for _, w := range []watch.Interface{services, slices} {
		wg.Go(func() {
			defer w.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case ev, ok := <-w.ResultChan():
					if !ok {
						return
					}
					if obj, err := meta.Accessor(ev.Object); err == nil {
						f.note(obj.GetName(), time.Now())
					}
				}
			}
		})
	}
	go func() { wg.Wait(); close(f.done) }()
	return f, nil
}
