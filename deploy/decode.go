package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
)

// Decode splits a YAML (or JSON) stream of Kubernetes objects into objects,
// skipping empty documents. Every object must have apiVersion, kind and
// metadata.name; errors name the source and the document's position.
func Decode(source string, data []byte) ([]*unstructured.Unstructured, error) {
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for doc := 1; ; doc++ {
		var fields map[string]any
		err := dec.Decode(&fields)
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", source, doc, err)
		}
		if len(fields) == 0 {
			continue
		}
		obj := &unstructured.Unstructured{Object: fields}
		if err := checkObject(obj); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", source, doc, err)
		}
		objs = append(objs, obj)
	}
}

func checkObject(obj *unstructured.Unstructured) error {
	switch {
	case obj.GetAPIVersion() == "":
		return errors.New("no apiVersion")
	case obj.GetKind() == "":
		return errors.New("no kind")
	case obj.GetName() == "":
		return fmt.Errorf("%s without metadata.name", obj.GetKind())
	}
	return nil
}

// Describe names an object the way kubectl does: kind/namespace/name.
func Describe(obj *unstructured.Unstructured) string {
	if ns := obj.GetNamespace(); ns != "" {
		return fmt.Sprintf("%s/%s/%s", obj.GetKind(), ns, obj.GetName())
	}
	return fmt.Sprintf("%s/%s", obj.GetKind(), obj.GetName())
}
