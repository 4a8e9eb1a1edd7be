package source

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/kubesky/kubesky/kube2sky/group"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// informerSpec is one informer: what it lists and watches, what its cache
// keeps of each object, how the cache is indexed and who hears of changes.
type informerSpec struct {
	what      string         // "service", for errors
	example   runtime.Object // the type listed and watched
	list      cache.ListWithContextFunc
	watch     cache.WatchFuncWithContext
	transform cache.TransformFunc
	indexers  cache.Indexers // nil for none
	handler   cache.ResourceEventHandler
}

// informerSet is every informer a controller runs, and what must have
// synced before its first reconcile.
type informerSet struct {
	all    []cache.SharedIndexInformer
	synced []cache.InformerSynced
}

// add builds the informer of spec, with its handler, and returns it and the
// handler's registration.
func (s *informerSet) add(spec informerSpec) (cache.SharedIndexInformer, cache.ResourceEventHandlerRegistration, error) {
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return untilAccepted(ctx, func(ctx context.Context) (runtime.Object, error) { return spec.list(ctx, opts) })
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return untilAccepted(ctx, func(ctx context.Context) (watch.Interface, error) { return spec.watch(ctx, opts) })
		},
	}
	inf := cache.NewSharedIndexInformerWithOptions(lw, spec.example, cache.SharedIndexInformerOptions{Indexers: spec.indexers})
	_ = inf.SetTransform(spec.transform) // fails only once started
	reg, err := inf.AddEventHandler(spec.handler)
	if err != nil {
		return nil, nil, fmt.Errorf("%s informer: %w", spec.what, err)
	}
	s.all = append(s.all, inf)
	s.synced = append(s.synced, inf.HasSynced)
	return inf, reg, nil
}

// The pace at which untilAccepted asks again.
const (
	acceptRetryFirst = 200 * time.Millisecond
	acceptRetryMax   = time.Second
)

// untilAccepted calls request until the API server takes it, or ctx ends:
// while the server is unreachable, starting up or asking clients to slow
// down, it asks again, from every acceptRetryFirst up to every
// acceptRetryMax. client-go's reflector would back off from these itself,
// doubling up to 30 s plus as much jitter, and forgets its back-off only
// after 2 minutes without one: an API server restarted twice within that
// time would leave kube2sky blind for up to a minute after it came back.
func untilAccepted[T any](ctx context.Context, request func(context.Context) (T, error)) (T, error) {
	wait := acceptRetryFirst
	for {
		out, err := request(ctx)
		if err == nil || !unavailable(err) {
			return out, err
		}
		select {
		case <-ctx.Done():
			return out, err
		case <-time.After(wait):
		}
		wait = min(2*wait, acceptRetryMax)
	}
}

// unavailable reports an error of an API server that is down, starting up
// or overloaded, rather than one that refuses the request.
func unavailable(err error) bool {
	return utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err) ||
		apierrors.IsServiceUnavailable(err) || apierrors.IsTooManyRequests(err)
}

// run runs every informer until ctx ends.
func (s *informerSet) run(ctx context.Context, wg *sync.WaitGroup) {
	for _, inf := range s.all {
		wg.Go(func() { inf.RunWithContext(ctx) })
	}
}

// listWatcher is a typed client of one resource, L its list type.
type listWatcher[L runtime.Object] interface {
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// clusterWide is the spec of an informer of every object client lists,
// to be completed with a transform and a handler.
func clusterWide[L runtime.Object](what string, example runtime.Object, client listWatcher[L]) informerSpec {
	return informerSpec{
		what:    what,
		example: example,
		list: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return client.List(ctx, opts)
		},
		watch: client.Watch,
	}
}

// addConfigMap watches the one ConfigMap ref ("namespace/name") names;
// each change of it queues key.
func (s *informerSet) addConfigMap(kube kubernetes.Interface, ref string, key group.Key, changed func(group.Key, time.Time)) (cache.SharedIndexInformer, error) {
	ns, name, err := SplitObjectRef(ref)
	if err != nil {
		return nil, err
	}
	inf, _, err := s.add(configMapSpec(kube, ns, name, func() { changed(key, time.Time{}) }))
	return inf, err
}

// configMapSpec is the informer of the one ConfigMap ns/name, whose
// changes call changed.
func configMapSpec(kube kubernetes.Interface, ns, name string, changed func()) informerSpec {
	selector := fields.OneTermEqualSelector("metadata.name", name).String()
	return informerSpec{
		what:    "configmap",
		example: &corev1.ConfigMap{},
		list: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.FieldSelector = selector
			return kube.CoreV1().ConfigMaps(ns).List(ctx, opts)
		},
		watch: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.FieldSelector = selector
			return kube.CoreV1().ConfigMaps(ns).Watch(ctx, opts)
		},
		transform: transformConfigMap,
		handler:   configMapHandler(name, changed),
	}
}

func transformConfigMap(obj any) (any, error) {
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		return &hostsObject{ObjectMeta: cacheMeta(&o.ObjectMeta), data: o.Data}, nil
	case *hostsObject:
		return o, nil
	}
	return nil, fmt.Errorf("configmap informer: unexpected object %T", obj)
}

// configMapHandler calls changed when the ConfigMap called name changes.
// The initial list is left to the first full reconcile.
func configMapHandler(name string, changed func()) cache.ResourceEventHandler {
	mine := func(obj any) bool {
		h, ok := unwrapTombstone(obj).(*hostsObject)
		return ok && h.Name == name // a fake API server ignores field selectors
	}
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if mine(obj) && !initial {
				changed()
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, n := oldObj.(*hostsObject), newObj.(*hostsObject)
			if mine(newObj) && (o.UID != n.UID || !maps.Equal(o.data, n.data)) {
				changed()
			}
		},
		DeleteFunc: func(obj any) {
			if mine(obj) {
				changed()
			}
		},
	}
}

// configMapObject returns the cached ConfigMap ref ("namespace/name") of
// inf, nil when there is none.
func configMapObject(inf cache.SharedIndexInformer, ref string) *hostsObject {
	if obj, ok, err := inf.GetIndexer().GetByKey(ref); err == nil && ok {
		return obj.(*hostsObject)
	}
	return nil
}

func unwrapTombstone(obj any) any {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return t.Obj
	}
	return obj
}

// SplitObjectRef splits "namespace/name" and checks both parts.
func SplitObjectRef(ref string) (namespace, name string, err error) {
	namespace, name, ok := strings.Cut(ref, "/")
	if !ok || len(validation.IsDNS1123Label(namespace)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
		return "", "", fmt.Errorf("%q must be namespace/name", ref)
	}
	return namespace, name, nil
}
