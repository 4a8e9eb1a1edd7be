package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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

// loadScalePods creates n running pods, loadWorkers at a time: each is
// created, then its status is patched through the status subresource.
func loadScalePods(ctx context.Context, kube kubernetes.Interface, n int) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(loadWorkers)
	for i := range n {
		g.Go(func() error { return createScalePod(ctx, kube, i) })
	}
	return g.Wait()
}

func createScalePod(ctx context.Context, kube kubernetes.Interface, i int) error {
	pods := kube.CoreV1().Pods(scaleNamespace)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: scalePodName(i)},
		Spec: corev1.PodSpec{NodeName: scalePodNode,
			Containers: []corev1.Container{{Name: "c", Image: "example.invalid/none"}}},
	}
	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating pod %s: %w", pod.Name, err)
	}
	patch, err := json.Marshal(map[string]any{"status": runningStatus(nthIPv4(scalePodBase, i))})
	if err != nil {
		return err
	}
	if _, err := pods.Patch(ctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		return fmt.Errorf("patching the status of pod %s: %w", pod.Name, err)
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
