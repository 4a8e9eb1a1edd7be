package deploy

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// Applier applies objects to an API server with server-side apply, as
// `kubectl apply --server-side --force-conflicts` does.
type Applier struct {
	client       dynamic.Interface
	mapper       *restmapper.DeferredDiscoveryRESTMapper
	fieldManager string
}

// NewApplier returns an Applier for the API server of cfg that applies as
// fieldManager.
func NewApplier(cfg *rest.Config, fieldManager string) (*Applier, error) {
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco))
	return &Applier{client: client, mapper: mapper, fieldManager: fieldManager}, nil
}

// Apply applies objs in order and stops at the first error, which names the
// object. A namespaced object without a namespace goes to "default".
func (a *Applier) Apply(ctx context.Context, objs []*unstructured.Unstructured) error {
	for _, obj := range objs {
		if err := a.ApplyOne(ctx, obj); err != nil {
			return err
		}
	}
	return nil
}

// ApplyOne applies one object.
func (a *Applier) ApplyOne(ctx context.Context, obj *unstructured.Unstructured) error {
	resource, err := a.resourceFor(obj)
	if err != nil {
		return fmt.Errorf("applying %s: %w", Describe(obj), err)
	}
	body, err := json.Marshal(obj.Object)
	if err != nil {
		return fmt.Errorf("applying %s: %w", Describe(obj), err)
	}
	force := true
	opts := metav1.PatchOptions{FieldManager: a.fieldManager, Force: &force}
	if _, err := resource.Patch(ctx, obj.GetName(), types.ApplyPatchType, body, opts); err != nil {
		return fmt.Errorf("applying %s: %w", Describe(obj), err)
	}
	return nil
}

// resourceFor maps the object's kind to its REST resource, asking discovery
// again once if the kind is unknown (a CRD installed a moment ago).
func (a *Applier) resourceFor(obj *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := obj.GroupVersionKind()
	mapping, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		a.mapper.Reset()
		mapping, err = a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		a.mapper.Reset() // discovery may have failed: ask again next time
		return nil, err
	}
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		return a.client.Resource(mapping.Resource), nil
	}
	namespace := obj.GetNamespace()
	if namespace == "" {
		namespace = metav1.NamespaceDefault
	}
	return a.client.Resource(mapping.Resource).Namespace(namespace), nil
}
