package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubesky/kubesky/integration/soakcheck"
)

const (
	// soakNamespace holds the soak's Services.
	soakNamespace = "soak"
	// nxdomain is the canonical answer of a name with no records.
	nxdomain = "NXDOMAIN"
	// writeRetryFor bounds how long one change retries its API requests
	// (an API server restarting, etcd without a leader).
	writeRetryFor = 90 * time.Second
	// writeRetryEvery paces those retries.
	writeRetryEvery = 200 * time.Millisecond
)

// soakChurn changes a pool of headless Services and their EndpointSlices
// (one endpoint each, no selector, so the soak writes the slices itself):
// a change creates an absent Service with a fresh address, moves a present
// one's endpoint to a fresh address, or deletes it. It records every
// acknowledged value of every name in a Timeline. A Service is changed
// again only once its last change was served by every skydns (or given
// up on), so each change is measured on its own.
type soakChurn struct {
	kube kubernetes.Interface
	rng  *rand.Rand // the soak's seeded source; used by the churn goroutine only
	pool []string   // Service names

	mu       sync.Mutex
	timeline soakcheck.Timeline // by DNS name
	present  map[string]bool    // by Service name
	busy     map[string]bool    // by Service name: a change is being made or verified
	next     int                // the next address
	acked    int                // acknowledged changes
	skipped  int                // ticks with no idle Service
	failed   []string           // changes never acknowledged
}

func newSoakChurn(kube kubernetes.Interface, rng *rand.Rand, size int, start time.Time) *soakChurn {
	c := &soakChurn{kube: kube, rng: rng, timeline: soakcheck.Timeline{}, present: map[string]bool{}, busy: map[string]bool{}}
	for i := range size {
		name := fmt.Sprintf("s-%d", i)
		c.pool = append(c.pool, name)
		c.timeline.Add(soakName(name), soakcheck.Version{Started: start, Acked: start, Value: nxdomain})
	}
	return c
}

// soakName is the DNS name of a soak Service.
func soakName(service string) string { return serviceName(soakNamespace, service) }

// freshAddress returns an address no change used before.
func (c *soakChurn) freshAddress() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.next
	c.next++
	return fmt.Sprintf("10.%d.%d.%d", 200+n>>16, n>>8&255, n&255)
}

// pick returns an idle Service, marked busy, and what to do with it; ok
// is false when every Service is busy.
func (c *soakChurn) pick() (service string, kind string, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	start := c.rng.IntN(len(c.pool))
	for i := range c.pool {
		s := c.pool[(start+i)%len(c.pool)]
		if c.busy[s] {
			continue
		}
		c.busy[s] = true
		switch {
		case !c.present[s]:
			return s, "create", true
		case c.rng.IntN(10) < 3:
			return s, "delete", true
		default:
			return s, "move", true
		}
	}
	c.skipped++
	return "", "", false
}

// change makes one change of service and returns the value it
// acknowledged, or an error when the API never acknowledged it.
func (c *soakChurn) change(ctx context.Context, service, kind string) (soakcheck.Version, error) {
	value := nxdomain
	var write func(context.Context) error
	switch kind {
	case "create":
		value = c.freshAddress()
		write = func(ctx context.Context) error { return c.create(ctx, service, value) }
	case "move":
		value = c.freshAddress()
		write = func(ctx context.Context) error { return c.move(ctx, service, value) }
	default:
		write = func(ctx context.Context) error { return c.remove(ctx, service) }
	}
	started := time.Now()
	if err := retryWrite(ctx, write); err != nil {
		c.mu.Lock()
		c.failed = append(c.failed, fmt.Sprintf("%s %s: %v", kind, service, err))
		c.busy[service] = false
		c.mu.Unlock()
		return soakcheck.Version{}, err
	}
	v := soakcheck.Version{Started: started, Acked: time.Now(), Value: value}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.timeline.Add(soakName(service), v)
	c.present[service] = kind != "delete"
	c.acked++
	return v, nil
}

// done marks service idle again.
func (c *soakChurn) done(service string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.busy[service] = false
}

// retryWrite calls write until it succeeds, ctx ends or writeRetryFor
// passes.
func retryWrite(ctx context.Context, write func(context.Context) error) error {
	deadline := time.Now().Add(writeRetryFor)
	for {
		reqCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := write(reqCtx)
		cancel()
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		time.Sleep(writeRetryEvery) // pacing the retries of a failed request
	}
}

// create creates the Service, then its slice with address: the name
// answers NXDOMAIN until the slice exists.
func (c *soakChurn) create(ctx context.Context, service, address string) error {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: service},
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone,
			Ports: []corev1.ServicePort{{Name: "p", Port: 80, Protocol: corev1.ProtocolTCP}}},
	}
	_, err := c.kube.CoreV1().Services(soakNamespace).Create(ctx, svc, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	_, err = c.kube.DiscoveryV1().EndpointSlices(soakNamespace).Create(ctx, soakSlice(service, address), metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return c.move(ctx, service, address)
	}
	return err
}

// soakSlice is the one EndpointSlice of service.
func soakSlice(service, address string) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: service + "-x",
			Labels: map[string]string{discoveryv1.LabelServiceName: service}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{address},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("p"), Port: ptr.To[int32](80), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
}

// move points the slice's endpoint at address.
func (c *soakChurn) move(ctx context.Context, service, address string) error {
	slices := c.kube.DiscoveryV1().EndpointSlices(soakNamespace)
	slice, err := slices.Get(ctx, service+"-x", metav1.GetOptions{})
	if err != nil {
		return err
	}
	slice.Endpoints[0].Addresses = []string{address}
	_, err = slices.Update(ctx, slice, metav1.UpdateOptions{})
	return err
}

// remove deletes the Service (its name answers NXDOMAIN from then on),
// then its slice.
func (c *soakChurn) remove(ctx context.Context, service string) error {
	err := c.kube.CoreV1().Services(soakNamespace).Delete(ctx, service, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	err = c.kube.DiscoveryV1().EndpointSlices(soakNamespace).Delete(ctx, service+"-x", metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// versions returns the timeline and the final value of every pool name;
// call it once the churn has stopped.
func (c *soakChurn) versions() (soakcheck.Timeline, map[string]string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	final := map[string]string{}
	for name, vs := range c.timeline {
		final[name] = vs[len(vs)-1].Value
	}
	return c.timeline, final
}
