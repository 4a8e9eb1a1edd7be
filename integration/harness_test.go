package integration

import (
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesky/kubesky/integration/harness"
)

// TestHarnessEndpointSlices proves the path the kube2sky tests rely on: a
// Service with a selector and a Pod whose status a test patches as a kubelet
// would make the real EndpointSlice controller publish the Pod's IP.
func TestHarnessEndpointSlices(t *testing.T) {
	etcd := harness.StartEtcd(t)
	api := harness.StartAPIServer(t, etcd.Endpoint)
	harness.StartControllerManager(t, api.Kubeconfig)
	client := api.Client
	ctx := t.Context()

	harness.Eventually(t, 30*time.Second, func() error {
		svc, err := client.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if svc.Spec.ClusterIP != "10.96.0.1" {
			return fmt.Errorf("default/kubernetes clusterIP = %q, want 10.96.0.1", svc.Spec.ClusterIP)
		}
		return nil
	})

	harness.CreateNode(t, client, "node-1")
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "web"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}},
		},
	}
	if _, err := client.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{
			NodeName:   "node-1",
			Containers: []corev1.Container{{Name: "web", Image: "example.invalid/web"}},
		},
	}
	if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	harness.SetPodStatus(t, client, "default", "web-0", true, "10.244.1.7")

	harness.Eventually(t, 30*time.Second, func() error {
		return hasReadyEndpoint(t, api, "default", "web", "10.244.1.7")
	})
}

// hasReadyEndpoint reports whether an EndpointSlice of the Service lists ip
// as a ready address.
func hasReadyEndpoint(t *testing.T, api *harness.APIServer, namespace, service, ip string) error {
	list, err := api.Client.DiscoveryV1().EndpointSlices(namespace).List(t.Context(), metav1.ListOptions{
		LabelSelector: discoveryv1.LabelServiceName + "=" + service,
	})
	if err != nil {
		return err
	}
	for _, slice := range list.Items {
		for _, ep := range slice.Endpoints {
			ready := ep.Conditions.Ready != nil && *ep.Conditions.Ready
			if ready && slices.Contains(ep.Addresses, ip) {
				return nil
			}
		}
	}
	return fmt.Errorf("no EndpointSlice of %s/%s lists %s as ready (%d slices)", namespace, service, ip, len(list.Items))
}
