package integration

import (
	"context"
	"fmt"
	"net/netip"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// The objects of BenchmarkKube2SkyAtScale: in scaleNamespace, headless
// Services h-00000, h-00001, … without a selector, each with one
// EndpointSlice of the same name holding endpointsPerService ready
// endpoints with hostnames ep-0 … ep-4 and one named port.
const (
	scaleNamespace      = "scale"
	endpointsPerService = 5
	scalePortName       = "http"
	scalePort           = 8080
	// keysPerService is what kube2sky writes for one of them: per endpoint
	// an A key, an SRV key for the named port and a PTR key.
	keysPerService = 3 * endpointsPerService
	// baseKeys are the keys of an otherwise empty cluster: the `kubernetes`
	// Service (A, SRV for its https port, PTR) and dns-version.
	baseKeys = 4
	// loadWorkers is how many creates run at once while loading.
	loadWorkers = 16
	// fastClientQPS lifts client-go's rate limit (5 QPS by default) for
	// loading and churning.
	fastClientQPS = 5000
)

// scaleServiceName names the i-th preloaded headless Service and its slice.
func scaleServiceName(i int) string { return fmt.Sprintf("h-%05d", i) }

// scaleHostname names the k-th endpoint of a preloaded Service.
func scaleHostname(k int) string { return fmt.Sprintf("ep-%d", k) }

// scaleEndpointIP is the address of endpoint k of Service i: distinct for
// every endpoint, counted up from 10.128.0.0.
func scaleEndpointIP(i, k int) string {
	return nthIPv4(netip.MustParseAddr("10.128.0.0"), i*endpointsPerService+k)
}

// churnIP is the new address of the endpoint moved by change m, counted up
// from 10.64.0.0, apart from every preloaded address.
func churnIP(m int) string {
	return nthIPv4(netip.MustParseAddr("10.64.0.0"), m)
}

// nthIPv4 returns the address n after base.
func nthIPv4(base netip.Addr, n int) string {
	b := base.As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	v += uint32(n)
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}).String()
}

// headlessService is preloaded Service i.
func headlessService(i int) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: scaleServiceName(i), Namespace: scaleNamespace},
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Ports:     []corev1.ServicePort{{Name: scalePortName, Port: scalePort, Protocol: corev1.ProtocolTCP}},
		},
	}
}

// headlessSlice is the EndpointSlice of preloaded Service i.
func headlessSlice(i int) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name:      scaleServiceName(i),
			Namespace: scaleNamespace,
			Labels:    map[string]string{discoveryv1.LabelServiceName: scaleServiceName(i)},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports: []discoveryv1.EndpointPort{{
			Name: ptr.To(scalePortName), Port: ptr.To[int32](scalePort), Protocol: ptr.To(corev1.ProtocolTCP),
		}},
	}
	for k := range endpointsPerService {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{scaleEndpointIP(i, k)},
			Hostname:   ptr.To(scaleHostname(k)),
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
		})
	}
	return s
}

// fastClient is a clientset for cfg's server speaking protobuf, without
// client-side rate limiting to speak of.
func fastClient(cfg *rest.Config) (kubernetes.Interface, error) {
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst = fastClientQPS, fastClientQPS
	c.ContentType = "application/vnd.kubernetes.protobuf"
	return kubernetes.NewForConfig(c)
}

// loadScaleObjects creates the namespace and n headless Services with their
// EndpointSlices, loadWorkers at a time.
func loadScaleObjects(ctx context.Context, kube kubernetes.Interface, n int) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: scaleNamespace}}
	if _, err := kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating namespace %s: %w", scaleNamespace, err)
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(loadWorkers)
	for i := range n {
		g.Go(func() error {
			if _, err := kube.CoreV1().Services(scaleNamespace).Create(ctx, headlessService(i), metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("creating Service %s: %w", scaleServiceName(i), err)
			}
			if _, err := kube.DiscoveryV1().EndpointSlices(scaleNamespace).Create(ctx, headlessSlice(i), metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("creating EndpointSlice %s: %w", scaleServiceName(i), err)
			}
			return nil
		})
	}
	return g.Wait()
}
