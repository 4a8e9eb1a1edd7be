package explain

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// readConfigMap returns key of the ConfigMap namespace/name in the cluster
// the kubeconfig file reaches (`corefile check --kubeconfig`).
func readConfigMap(ctx context.Context, kubeconfig, namespace, name, key string) (string, error) {
	kube, err := kubeClient(kubeconfig)
	if err != nil {
		return "", err
	}
	return configMapValue(ctx, kube, namespace, name, key)
}

func configMapValue(ctx context.Context, kube kubernetes.Interface, namespace, name, key string) (string, error) {
	cm, err := kube.CoreV1().ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("ConfigMap %s/%s: %w", namespace, name, err)
	}
	value, ok := cm.Data[key]
	if !ok {
		return "", fmt.Errorf("ConfigMap %s/%s has no key %q", namespace, name, key)
	}
	return value, nil
}
