package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubesky/kubesky/integration/harness"
)

// Helpers for the failure tests: Services through the typed client, and
// expectations built in code rather than read from the scenario file.

// createService creates a ClusterIP Service with an http port and the given
// cluster IP ("" lets the API server pick one) and returns the IP.
func createService(t *testing.T, kube kubernetes.Interface, namespace, name, clusterIP string) string {
	t.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       corev1.ServiceSpec{ClusterIP: clusterIP, Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}
	created, err := kube.CoreV1().Services(namespace).Create(t.Context(), svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating service %s/%s: %v", namespace, name, err)
	}
	return created.Spec.ClusterIP
}

// deleteService deletes a Service.
func deleteService(t *testing.T, kube kubernetes.Interface, namespace, name string) {
	t.Helper()
	err := kube.CoreV1().Services(namespace).Delete(t.Context(), name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	if err != nil {
		t.Fatalf("deleting service %s/%s: %v", namespace, name, err)
	}
}

// serviceName returns the FQDN of a Service in cluster.local.
func serviceName(namespace, name string) string {
	return fmt.Sprintf("%s.%s.svc.cluster.local.", name, namespace)
}

// aRecords is the expectation that qname's A records are exactly ips
// (NXDOMAIN when there are none).
func aRecords(qname string, ips ...string) expectation {
	if len(ips) == 0 {
		return expectation{Qname: qname, Qtype: "A", Rcode: "NXDOMAIN", Authority: []string{"SOA"}}
	}
	return expectation{Qname: qname, Qtype: "A", Rdata: &ips}
}

// expectWithin polls expectations over UDP and TCP until each holds,
// failing the test after timeout.
func expectWithin(t *testing.T, dnsAddr string, timeout time.Duration, es ...expectation) {
	t.Helper()
	for _, e := range es {
		for _, transport := range e.transports() {
			harness.Eventually(t, timeout, func() error {
				return check(t.Context(), dnsAddr, e, transport)
			})
		}
	}
}

// holdsNow checks expectations once over UDP and TCP.
func holdsNow(ctx context.Context, dnsAddr string, es ...expectation) error {
	for _, e := range es {
		for _, transport := range e.transports() {
			if err := check(ctx, dnsAddr, e, transport); err != nil {
				return err
			}
		}
	}
	return nil
}

// prefixState returns nil when some key starts with present and none with
// absent.
func prefixState(ctx context.Context, s *stack, present, absent string) error {
	c := s.dnsEtcd.Client()
	got, err := c.Get(ctx, present, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return err
	}
	gone, err := c.Get(ctx, absent, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return err
	}
	if got.Count == 0 || gone.Count != 0 {
		return fmt.Errorf("%d keys under %s (want some), %d under %s (want none)", got.Count, present, gone.Count, absent)
	}
	return nil
}
