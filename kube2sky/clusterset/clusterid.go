package clusterset

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	cs "github.com/kubesky/kubesky/contract/clusterset"
)

// ClusterPropertyName is the ClusterProperty holding the cluster ID
// (KEP-2149).
const ClusterPropertyName = "cluster.clusterset.k8s.io"

// ClusterProperties is KEP-2149's resource (sigs.k8s.io/about-api).
var ClusterProperties = schema.GroupVersionResource{Group: "about.k8s.io", Version: "v1alpha1", Resource: "clusterproperties"}

// ReadClusterID returns the value of the ClusterProperty
// cluster.clusterset.k8s.io, which must be a lower-case DNS label.
func ReadClusterID(ctx context.Context, client dynamic.Interface) (string, error) {
	obj, err := client.Resource(ClusterProperties).Get(ctx, ClusterPropertyName, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("no --cluster-id, and ClusterProperty %s: %w", ClusterPropertyName, err)
	}
	return clusterIDOf(obj)
}

func clusterIDOf(obj *unstructured.Unstructured) (string, error) {
	id, _, err := unstructured.NestedString(obj.Object, "spec", "value")
	switch {
	case err != nil:
		return "", fmt.Errorf("ClusterProperty %s: spec.value: %w", ClusterPropertyName, err)
	case !cs.ValidClusterID(id):
		return "", fmt.Errorf("ClusterProperty %s: spec.value %q is not a lower-case DNS label (kubesky puts the cluster ID into DNS names)", ClusterPropertyName, id)
	}
	return id, nil
}
