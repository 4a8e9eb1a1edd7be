package integration

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubesky/kubesky/integration/harness"
)

// propagationServices is how many Services each propagation run measures.
const propagationServices = 100

// TestPropagation measures the time from the API server acknowledging a
// Service's creation to skydns answering its A record, over 100 Services
// created one after another and 100 created at once. It prints p50 and p99;
// they are figures, not pass/fail limits — the test fails only when an
// answer never appears.
func TestPropagation(t *testing.T) {
	s := startStack(t, stackOptions{})
	createNamespace(t, s.kube, "propagation")
	measure(t, s, "warm-up", 0, 1) // informers, connections and caches hot

	t.Run("one Service at a time", func(t *testing.T) {
		report(t, "sequential", measure(t, s, "seq", 0, propagationServices))
	})
	t.Run("a burst of Services created concurrently", func(t *testing.T) {
		report(t, "burst", measure(t, s, "burst", 10, propagationServices))
	})
}

// measure creates n Services named <prefix>-<i>, with up to parallel at a
// time (0: one after another), and returns each one's propagation time.
func measure(t *testing.T, s *stack, prefix string, parallel, n int) []time.Duration {
	t.Helper()
	latencies := make([]time.Duration, n)
	sem := make(chan struct{}, max(parallel, 1))
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			d, err := propagate(t.Context(), s, fmt.Sprintf("%s-%d", prefix, i))
			latencies[i] = d
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	return latencies
}

// propagate creates one Service and returns how long after the API server
// acknowledged it skydns first answered its cluster IP.
func propagate(ctx context.Context, s *stack, name string) (time.Duration, error) {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "propagation"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}
	created, err := s.kube.CoreV1().Services("propagation").Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		return 0, err
	}
	acked := time.Now()
	qname := name + ".propagation.svc.cluster.local."
	if err := pollAnswer(ctx, s.skydns.DNSAddr, qname, created.Spec.ClusterIP, 30*time.Second); err != nil {
		return 0, err
	}
	return time.Since(acked), nil
}

// pollAnswer asks for qname's A record over UDP every millisecond until
// the answer holds ip, or fails after timeout.
func pollAnswer(ctx context.Context, addr, qname, ip string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		if m, err := harness.Query(addr, "udp", qname, dns.TypeA); err == nil && answerHolds(m, ip) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s never answered %s: %w", qname, ip, ctx.Err())
		case <-tick.C:
		}
	}
}

func answerHolds(m *dns.Msg, ip string) bool {
	for _, rr := range m.Answer {
		if a, ok := rr.(*dns.A); ok && a.A.String() == ip {
			return true
		}
	}
	return false
}

// report logs and prints the percentiles of a run.
func report(t *testing.T, run string, latencies []time.Duration) {
	t.Helper()
	sorted := slices.Clone(latencies)
	slices.Sort(sorted)
	line := fmt.Sprintf("propagation %s: API write acknowledged -> answer visible, %d services: p50 %v, p99 %v, max %v",
		run, len(sorted), percentile(sorted, 50), percentile(sorted, 99), percentile(sorted, 100))
	t.Log(line)
	fmt.Println(line)
}

// percentile returns the p-th percentile of sorted durations (nearest rank).
func percentile(sorted []time.Duration, p int) time.Duration {
	rank := (p*len(sorted) + 99) / 100
	return sorted[max(rank, 1)-1].Round(100 * time.Microsecond)
}

// createNamespace creates a namespace through the typed client.
func createNamespace(t *testing.T, kube kubernetes.Interface, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := kube.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
}
