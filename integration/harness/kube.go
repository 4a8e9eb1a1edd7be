package harness

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// CreateNode creates a Node object named name. Without a kubelet nothing
// runs on it, but the EndpointSlice controller skips Pods whose spec.nodeName
// names no existing Node, so tests create one and bind their Pods to it.
func CreateNode(t testing.TB, client kubernetes.Interface, name string) *corev1.Node {
	t.Helper()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	created, err := client.CoreV1().Nodes().Create(t.Context(), node, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating node %s: %v", name, err)
	}
	return created
}

// SetPodStatus patches a Pod's status through the status subresource, as a
// kubelet would: phase Running, the given IPs (the first is status.podIP), and
// the Ready condition set to ready. It returns the updated Pod.
func SetPodStatus(t testing.TB, client kubernetes.Interface, namespace, name string, ready bool, ips ...string) *corev1.Pod {
	t.Helper()
	patch, err := json.Marshal(map[string]any{"status": podStatus(ready, ips)})
	if err != nil {
		t.Fatal(err)
	}
	pod, err := client.CoreV1().Pods(namespace).Patch(t.Context(), name,
		types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatalf("patching status of pod %s/%s: %v", namespace, name, err)
	}
	return pod
}

func podStatus(ready bool, ips []string) corev1.PodStatus {
	condition := corev1.ConditionFalse
	if ready {
		condition = corev1.ConditionTrue
	}
	status := corev1.PodStatus{
		Phase: corev1.PodRunning,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: condition, LastTransitionTime: metav1.Now()},
		},
	}
	for _, ip := range ips {
		status.PodIPs = append(status.PodIPs, corev1.PodIP{IP: ip})
	}
	if len(ips) > 0 {
		status.PodIP = ips[0]
	}
	return status
}
