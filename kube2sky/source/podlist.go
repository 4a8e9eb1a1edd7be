package source

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
)

// podPageSize is how many Pods one request of the pod informer's list asks
// for.
const podPageSize = 500

// podObjectList is what the pod informer's list returns: every pod matching
// podFieldSelector, already reduced to a podObject.
type podObjectList struct {
	metav1.ListMeta
	Items []runtime.Object
}

func (l *podObjectList) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

func (l *podObjectList) DeepCopyObject() runtime.Object {
	c := &podObjectList{ListMeta: *l.ListMeta.DeepCopy(), Items: make([]runtime.Object, len(l.Items))}
	for i, o := range l.Items {
		c.Items[i] = o.DeepCopyObject()
	}
	return c
}

// listPods is the pod informer's list, which client-go uses only when the
// API server does not stream the initial state (useWatchList): page by
// page, each page's Pods reduced to podObjects before the next is asked
// for. A plain list would decode every Pod whole (spec, status, managed
// fields) and hold them all until the informer's transform ran over the
// lot: at 150,000 pods, most of kube2sky's peak. A first list at resource
// version "0" would be served whole from the API server's watch cache
// whatever its limit, so it is made a consistent list instead, which pages.
func listPods(ctx context.Context, pods typedcorev1.PodInterface, opts metav1.ListOptions) (*podObjectList, error) {
	opts.FieldSelector = podFieldSelector
	opts.Limit = podPageSize
	if opts.ResourceVersion == "0" {
		opts.ResourceVersion, opts.ResourceVersionMatch = "", ""
	}
	out := &podObjectList{}
	for first := true; ; first = false {
		page, err := pods.List(ctx, opts)
		if err != nil {
			return nil, err
		}
		if first {
			out.ResourceVersion = page.ResourceVersion
		}
		for i := range page.Items {
			out.Items = append(out.Items, newPodObject(&page.Items[i]))
		}
		if page.Continue == "" {
			return out, nil
		}
		opts.Continue = page.Continue
		opts.ResourceVersion, opts.ResourceVersionMatch = "", ""
	}
}
