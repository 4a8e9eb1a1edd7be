package integration

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/utils/ptr"
)

// fieldManager is the server-side apply manager of every object the
// scenarios apply.
const fieldManager = "kubesky-integration"

// applier applies and deletes objects given as YAML, whatever their kind,
// as `kubectl apply --server-side` and `kubectl delete` would.
type applier struct {
	dyn    dynamic.Interface
	mapper meta.RESTMapper
}

func newApplier(cfg *rest.Config) (*applier, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	return &applier{dyn: dyn, mapper: mapper}, nil
}

// applyYAML server-side applies every object of a YAML stream (documents
// separated by ---); objects without a namespace get namespace.
func (a *applier) applyYAML(ctx context.Context, text, namespace string) error {
	objs, err := decodeObjects(text)
	if err != nil {
		return err
	}
	for _, obj := range objs {
		if err := a.apply(ctx, obj, namespace); err != nil {
			return err
		}
	}
	return nil
}

func (a *applier) apply(ctx context.Context, obj *unstructured.Unstructured, namespace string) error {
	res, err := a.resource(obj.GroupVersionKind(), obj.GetNamespace(), namespace)
	if err != nil {
		return err
	}
	_, err = res.Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: fieldManager, Force: true})
	if err != nil {
		return fmt.Errorf("applying %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return nil
}

// delete deletes one object at once (grace period 0: without a kubelet a
// Pod would otherwise wait forever for its containers to stop).
func (a *applier) delete(ctx context.Context, ref objectRef, namespace string) error {
	gvk, err := a.kindFor(ref.Kind)
	if err != nil {
		return err
	}
	res, err := a.resource(gvk, ref.Namespace, namespace)
	if err != nil {
		return err
	}
	err = res.Delete(ctx, ref.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	if err != nil {
		return fmt.Errorf("deleting %s %s: %w", ref.Kind, ref.Name, err)
	}
	return nil
}

// kindFor finds the group and version serving a kind.
func (a *applier) kindFor(kind string) (schema.GroupVersionKind, error) {
	gvr, err := a.mapper.ResourceFor(schema.GroupVersionResource{Resource: strings.ToLower(kind)})
	if err != nil {
		return schema.GroupVersionKind{}, fmt.Errorf("kind %s: %w", kind, err)
	}
	return a.mapper.KindFor(gvr)
}

// resource returns the client of a kind, in namespace (else fallback) when
// the kind is namespaced.
func (a *applier) resource(gvk schema.GroupVersionKind, namespace, fallback string) (dynamic.ResourceInterface, error) {
	m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("kind %s: %w", gvk, err)
	}
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		return a.dyn.Resource(m.Resource), nil
	}
	if namespace == "" {
		namespace = fallback
	}
	if namespace == "" {
		return nil, fmt.Errorf("%s: no namespace", gvk.Kind)
	}
	return a.dyn.Resource(m.Resource).Namespace(namespace), nil
}

// decodeObjects reads every non-empty YAML document of text as an object.
func decodeObjects(text string) ([]*unstructured.Unstructured, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(text)))
	var objs []*unstructured.Unstructured
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(string(doc)) == "" {
			continue
		}
		obj, err := decodeObject(doc)
		if err != nil {
			return nil, err
		}
		objs = append(objs, obj)
	}
}

func decodeObject(doc []byte) (*unstructured.Unstructured, error) {
	js, err := utilyaml.ToJSON(doc)
	if err != nil {
		return nil, err
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(js); err != nil {
		return nil, fmt.Errorf("object %s: %w", firstLine(doc), err)
	}
	if obj.GetName() == "" {
		return nil, fmt.Errorf("%s object has no metadata.name", obj.GetKind())
	}
	return obj, nil
}

func firstLine(doc []byte) string {
	line, _, _ := strings.Cut(strings.TrimSpace(string(doc)), "\n")
	return line
}
