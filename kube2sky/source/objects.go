package source

import (
	"fmt"

	"github.com/kubesky/kubesky/kube2sky/records"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// The informers' caches hold these small objects instead of the API objects:
// the transforms below convert each Service and EndpointSlice as it arrives,
// keeping only what DNS needs plus the metadata the informer itself uses
// (namespace, name, resource version) and the UID that events name.

// serviceObject is a cached Service.
type serviceObject struct {
	metav1.ObjectMeta
	svc records.Service
}

// sliceObject is a cached EndpointSlice.
type sliceObject struct {
	metav1.ObjectMeta
	slice records.EndpointSlice
}

func cacheMeta(m *metav1.ObjectMeta) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: m.Namespace, Name: m.Name, UID: m.UID, ResourceVersion: m.ResourceVersion}
}

// transformService is the Service informer's transform.
func transformService(obj any) (any, error) {
	switch o := obj.(type) {
	case *corev1.Service:
		return &serviceObject{ObjectMeta: cacheMeta(&o.ObjectMeta), svc: records.ServiceFrom(o)}, nil
	case *serviceObject:
		return o, nil
	}
	return nil, fmt.Errorf("service informer: unexpected object %T", obj)
}

// transformSlice is the EndpointSlice informer's transform; podNames keeps
// the endpoints' pod names (records.Zone.EndpointPodNames).
func transformSlice(podNames bool) cache.TransformFunc {
	from := records.EndpointSliceFrom
	if podNames {
		from = records.EndpointSliceWithPodNamesFrom
	}
	return func(obj any) (any, error) {
		switch o := obj.(type) {
		case *discoveryv1.EndpointSlice:
			return &sliceObject{ObjectMeta: cacheMeta(&o.ObjectMeta), slice: from(o)}, nil
		case *sliceObject:
			return o, nil
		}
		return nil, fmt.Errorf("endpointslice informer: unexpected object %T", obj)
	}
}
