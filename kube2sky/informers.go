package kube2sky

import (
	"context"
	"reflect"
	"time"

	"github.com/kubesky/kubesky/kube2sky/records"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// byService indexes EndpointSlices by the "namespace/name" of their Service.
const byService = "service"

func newServiceInformer(kube kubernetes.Interface) cache.SharedIndexInformer {
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return kube.CoreV1().Services(metav1.NamespaceAll).List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return kube.CoreV1().Services(metav1.NamespaceAll).Watch(ctx, opts)
		},
	}
	inf := cache.NewSharedIndexInformerWithOptions(lw, &corev1.Service{}, cache.SharedIndexInformerOptions{})
	_ = inf.SetTransform(transformService) // fails only once started
	return inf
}

func newSliceInformer(kube kubernetes.Interface) cache.SharedIndexInformer {
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return kube.DiscoveryV1().EndpointSlices(metav1.NamespaceAll).List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return kube.DiscoveryV1().EndpointSlices(metav1.NamespaceAll).Watch(ctx, opts)
		},
	}
	inf := cache.NewSharedIndexInformerWithOptions(lw, &discoveryv1.EndpointSlice{}, cache.SharedIndexInformerOptions{
		Indexers: cache.Indexers{byService: sliceServiceIndex},
	})
	_ = inf.SetTransform(transformSlice)
	return inf
}

func sliceServiceIndex(obj any) ([]string, error) {
	if s, ok := obj.(*sliceObject); ok && s.slice.ServiceKey() != "" {
		return []string{s.slice.ServiceKey()}, nil
	}
	return nil, nil
}

// serviceHandler enqueues the Service of every event. Objects of the
// initial list are not enqueued: the first full reconcile covers them.
func (c *Controller) serviceHandler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if s, ok := obj.(*serviceObject); ok && !initial {
				c.changed(s.svc.Key(), time.Time{})
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(*serviceObject)
			n, ok2 := newObj.(*serviceObject)
			if ok1 && ok2 && !reflect.DeepEqual(o.svc, n.svc) {
				c.changed(n.svc.Key(), time.Time{})
			}
		},
		DeleteFunc: func(obj any) {
			if s, ok := unwrapTombstone(obj).(*serviceObject); ok {
				c.changed(s.svc.Key(), time.Time{})
			}
		},
	}
}

// sliceHandler enqueues the Service an EndpointSlice belongs to (both, when
// an update moved it), with the slice's trigger time.
func (c *Controller) sliceHandler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if s, ok := obj.(*sliceObject); ok && !initial {
				c.sliceChanged(s.slice.ServiceKey(), s.slice.TriggerTime)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(*sliceObject)
			n, ok2 := newObj.(*sliceObject)
			if !ok1 || !ok2 || sameDNS(&o.slice, &n.slice) {
				return
			}
			if o.slice.ServiceKey() != n.slice.ServiceKey() {
				c.sliceChanged(o.slice.ServiceKey(), n.slice.TriggerTime)
			}
			c.sliceChanged(n.slice.ServiceKey(), n.slice.TriggerTime)
		},
		DeleteFunc: func(obj any) {
			if s, ok := unwrapTombstone(obj).(*sliceObject); ok {
				c.sliceChanged(s.slice.ServiceKey(), time.Time{})
			}
		},
	}
}

// sameDNS reports whether two versions of a slice yield the same records.
func sameDNS(a, b *records.EndpointSlice) bool {
	return a.Service == b.Service && a.AddressType == b.AddressType &&
		reflect.DeepEqual(a.Ports, b.Ports) && reflect.DeepEqual(a.Endpoints, b.Endpoints)
}

func unwrapTombstone(obj any) any {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return t.Obj
	}
	return obj
}

// changed records when a Service's records went stale and enqueues it. A
// zero trigger time means now.
func (c *Controller) changed(key string, trigger time.Time) {
	if key == "" {
		return
	}
	if trigger.IsZero() {
		trigger = time.Now()
	}
	c.triggers.add(key, trigger)
	c.queue.Add(key)
}

// sliceChanged is changed for a Service whose EndpointSlice changed; only a
// headless Service (or one not cached yet) takes records from its slices.
func (c *Controller) sliceChanged(key string, trigger time.Time) {
	if svc, ok := c.service(key); ok && !svc.Headless() {
		return
	}
	c.changed(key, trigger)
}

// service returns the cached Service with the given key.
func (c *Controller) service(key string) (*records.Service, bool) {
	obj, ok, err := c.services.GetIndexer().GetByKey(key)
	if err != nil || !ok {
		return nil, false
	}
	return &obj.(*serviceObject).svc, true
}

// slicesOf returns the cached EndpointSlices of a Service.
func (c *Controller) slicesOf(key string) []records.EndpointSlice {
	objs, err := c.slices.GetIndexer().ByIndex(byService, key)
	if err != nil || len(objs) == 0 {
		return nil
	}
	out := make([]records.EndpointSlice, len(objs))
	for i, o := range objs {
		out[i] = o.(*sliceObject).slice
	}
	return out
}

// allServices returns every cached Service.
func (c *Controller) allServices() []*records.Service {
	objs := c.services.GetStore().List()
	out := make([]*records.Service, len(objs))
	for i, o := range objs {
		out[i] = &o.(*serviceObject).svc
	}
	return out
}
