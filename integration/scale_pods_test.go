package integration

import (
	"context"
	"fmt"
	"net/netip"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The pods of BenchmarkKube2SkyAtScale when KUBESKY_SCALE_PODS is set:
// p-000000, p-000001, … in scaleNamespace, bound to a node that does not
// exist (no kubelet runs) and given a running, ready status with one IPv4
// address from scalePodBase each, as a kubelet would report it. kube2sky
// then runs with --pod-records=verified and writes one key per pod.
const (
	scalePodNode = "scale-node"
	keysPerPod   = 1
)

var scalePodBase = netip.MustParseAddr("10.128.0.0")

func scalePodName(i int) string { return fmt.Sprintf("p-%06d", i) }

// podLoadWorkers is how many pods are loaded at once: more than
// loadWorkers, since each pod takes two requests and 150,000 of them must
// load within minutes on two cores.
const podLoadWorkers = 64

// loadScalePods creates n running pods, podLoadWorkers at a time: each is
// created, then given a running status through the status subresource
// (the API server drops the status a create carries).
func loadScalePods(ctx context.Context, kube kubernetes.Interface, n int) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(podLoadWorkers)
	for i := range n {
		g.Go(func() error { return createScalePod(ctx, kube, i) })
	}
	return g.Wait()
}

func createScalePod(ctx context.Context, kube kubernetes.Interface, i int) error {
	return startPod(ctx, kube, scalePodName(i), nthIPv4(scalePodBase, i))
}

// startPod creates pod name bound to scalePodNode, then makes it running
// with ip.
func startPod(ctx context.Context, kube kubernetes.Interface, name, ip string) error {
	created, err := createPod(ctx, kube, name)
	if err != nil {
		return err
	}
	return setRunning(ctx, kube, created, ip)
}

// createPod creates pod name bound to scalePodNode; the API server makes
// it pending.
func createPod(ctx context.Context, kube kubernetes.Interface, name string) (*corev1.Pod, error) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{NodeName: scalePodNode,
			Containers: []corev1.Container{{Name: "c", Image: "example.invalid/none"}}},
	}
	created, err := kube.CoreV1().Pods(scaleNamespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("creating pod %s: %w", name, err)
	}
	return created, nil
}

// setRunning gives a created pod a running status with ip through the
// status subresource, as its kubelet would: an update of the object the
// create returned, which spares the API server a patch's merge.
func setRunning(ctx context.Context, kube kubernetes.Interface, pod *corev1.Pod, ip string) error {
	pod.Status = runningStatus(ip)
	if _, err := kube.CoreV1().Pods(scaleNamespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("setting the status of pod %s: %w", pod.Name, err)
	}
	return nil
}

// runningStatus is the status of a running, ready pod with one address.
func runningStatus(ip string) corev1.PodStatus {
	return corev1.PodStatus{
		Phase:      corev1.PodRunning,
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
		PodIP:      ip,
		PodIPs:     []corev1.PodIP{{IP: ip}},
	}
}
