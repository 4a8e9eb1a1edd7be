package source

import (
	"reflect"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kubesky/kubesky/kube2sky/group"
	"github.com/kubesky/kubesky/kube2sky/records"
)

// byService indexes EndpointSlices by the "namespace/name" of their Service.
const byService = "service"

// serviceGroups are the records of each Service: a group per Service, its
// subtree svc/<ns>/<name> and the PTRs it wins.
type serviceGroups struct {
	zone     records.Zone
	services cache.SharedIndexInformer
	slices   cache.SharedIndexInformer
	problems *problemLog
	changed  func(group.Key, time.Time)
}

var _ recordGroup = (*serviceGroups)(nil)

// newServiceGroups adds the Service and EndpointSlice informers to set.
func newServiceGroups(kube kubernetes.Interface, set *informerSet, zone records.Zone, problems *problemLog,
	changed func(group.Key, time.Time)) (*serviceGroups, error) {
	g := &serviceGroups{zone: zone, problems: problems, changed: changed}
	var err error
	if g.services, _, err = set.add(g.serviceSpec(kube)); err != nil {
		return nil, err
	}
	if g.slices, _, err = set.add(g.sliceSpec(kube)); err != nil {
		return nil, err
	}
	return g, nil
}

func (g *serviceGroups) serviceSpec(kube kubernetes.Interface) informerSpec {
	s := clusterWide[*corev1.ServiceList]("service", &corev1.Service{}, kube.CoreV1().Services(metav1.NamespaceAll))
	s.transform, s.handler = transformService, g.serviceHandler()
	return s
}

func (g *serviceGroups) sliceSpec(kube kubernetes.Interface) informerSpec {
	s := clusterWide[*discoveryv1.EndpointSliceList]("endpointslice", &discoveryv1.EndpointSlice{},
		kube.DiscoveryV1().EndpointSlices(metav1.NamespaceAll))
	s.transform, s.handler = transformSlice(g.zone.EndpointPodNames()), g.sliceHandler()
	s.indexers = cache.Indexers{byService: sliceServiceIndex}
	return s
}

func sliceServiceIndex(obj any) ([]string, error) {
	if s, ok := obj.(*sliceObject); ok && s.slice.ServiceKey() != "" {
		return []string{s.slice.ServiceKey()}, nil
	}
	return nil, nil
}

// serviceHandler enqueues the Service of every event. Objects of the
// initial list are not enqueued: the first full reconcile covers them.
func (g *serviceGroups) serviceHandler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if s, ok := obj.(*serviceObject); ok && !initial {
				g.serviceChanged(s.svc.Key(), time.Time{})
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(*serviceObject)
			n, ok2 := newObj.(*serviceObject)
			if ok1 && ok2 && !reflect.DeepEqual(o.svc, n.svc) {
				g.serviceChanged(n.svc.Key(), time.Time{})
			}
		},
		DeleteFunc: func(obj any) {
			if s, ok := unwrapTombstone(obj).(*serviceObject); ok {
				g.serviceChanged(s.svc.Key(), time.Time{})
			}
		},
	}
}

// sliceHandler enqueues the Service an EndpointSlice belongs to (both, when
// an update moved it), with the slice's trigger time.
func (g *serviceGroups) sliceHandler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if s, ok := obj.(*sliceObject); ok && !initial {
				g.sliceChanged(s.slice.ServiceKey(), s.slice.TriggerTime)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(*sliceObject)
			n, ok2 := newObj.(*sliceObject)
			if !ok1 || !ok2 || sameDNS(&o.slice, &n.slice) {
				return
			}
			if o.slice.ServiceKey() != n.slice.ServiceKey() {
				g.sliceChanged(o.slice.ServiceKey(), n.slice.TriggerTime)
			}
			g.sliceChanged(n.slice.ServiceKey(), n.slice.TriggerTime)
		},
		DeleteFunc: func(obj any) {
			if s, ok := unwrapTombstone(obj).(*sliceObject); ok {
				g.sliceChanged(s.slice.ServiceKey(), time.Time{})
			}
		},
	}
}

// sameDNS reports whether two versions of a slice yield the same records.
func sameDNS(a, b *records.EndpointSlice) bool {
	return a.Service == b.Service && a.AddressType == b.AddressType &&
		reflect.DeepEqual(a.Ports, b.Ports) && reflect.DeepEqual(a.Endpoints, b.Endpoints)
}

// serviceChanged enqueues the Service called name ("namespace/name"), if
// any.
func (g *serviceGroups) serviceChanged(name string, trigger time.Time) {
	if name != "" {
		g.changed(group.Key{Kind: group.Service, Name: name}, trigger)
	}
}

// sliceChanged is serviceChanged for a Service whose EndpointSlice
// changed; only a headless Service (or one not cached yet) takes records
// from its slices.
func (g *serviceGroups) sliceChanged(name string, trigger time.Time) {
	if svc, ok := g.service(name); ok && !svc.Headless() && !g.zone.IgnoresEmptyServices() {
		return
	}
	g.serviceChanged(name, trigger)
}

// service returns the cached Service with the given key.
func (g *serviceGroups) service(name string) (*records.Service, bool) {
	obj, ok, err := g.services.GetIndexer().GetByKey(name)
	if err != nil || !ok {
		return nil, false
	}
	return &obj.(*serviceObject).svc, true
}

// slicesOf returns the cached EndpointSlices of a Service.
func (g *serviceGroups) slicesOf(name string) []records.EndpointSlice {
	objs, err := g.slices.GetIndexer().ByIndex(byService, name)
	if err != nil || len(objs) == 0 {
		return nil
	}
	out := make([]records.EndpointSlice, len(objs))
	for i, o := range objs {
		out[i] = o.(*sliceObject).slice
	}
	return out
}

// count returns how many Services are cached.
func (g *serviceGroups) count() int { return len(g.services.GetStore().ListKeys()) }

// desired builds a Service's records from the cache; a Service that is
// gone has none. Problems are logged once.
func (g *serviceGroups) desired(name string) group.Desired {
	svc, ok := g.service(name)
	if !ok {
		g.problems.report(name, nil)
		return group.Desired{}
	}
	return g.build(name, svc)
}

// eachDesired builds the records of every cached Service.
func (g *serviceGroups) eachDesired(fn func(name string, d group.Desired)) {
	for _, o := range g.services.GetStore().List() {
		svc := &o.(*serviceObject).svc
		name := svc.Key()
		fn(name, g.build(name, svc))
	}
}

func (g *serviceGroups) build(name string, svc *records.Service) group.Desired {
	var slices []records.EndpointSlice
	if svc.Headless() || g.zone.IgnoresEmptyServices() {
		slices = g.slicesOf(name)
	}
	entries, problems := records.Build(g.zone, *svc, slices)
	g.problems.report(name, problems)
	return group.SplitPTRs(g.zone, entries)
}

// scope is the Service's subtree.
func (g *serviceGroups) scope(name string) group.Scope {
	ns, svc := group.SplitServiceName(name)
	return group.Scope{Prefixes: []string{g.zone.ServiceKeyPrefix(ns, svc)}}
}

// prefixes is the zone's svc/ subtree, which owner sorts out further.
func (g *serviceGroups) prefixes() []string { return []string{g.subtree()} }

// subtree is the key prefix every Service's records are under.
func (g *serviceGroups) subtree() string { return g.zone.ZoneKeyPrefix() + "svc/" }

// starts returns every cached Service's subtree relative to subtree,
// "<ns>/<name>/", in key order.
func (g *serviceGroups) starts() []string {
	names := g.services.GetStore().ListKeys()
	for i, n := range names {
		names[i] = n + "/"
	}
	slices.Sort(names)
	return names
}

func (g *serviceGroups) groupOfKey(key string) (group.Key, bool) {
	ns, name, ok := g.zone.ServiceOfKey(key)
	return group.ServiceKey(ns, name), ok
}

// objectRef returns the reference an event on a Service or an
// EndpointSlice ("namespace/name") names, with the UID `kubectl describe`
// matches on, or nil when the object is no longer cached.
func (g *serviceGroups) objectRef(kind, key string) *corev1.ObjectReference {
	inf, apiVersion := g.services, "v1"
	if kind == "EndpointSlice" {
		inf, apiVersion = g.slices, "discovery.k8s.io/v1"
	}
	obj, ok, _ := inf.GetStore().GetByKey(key)
	if !ok {
		return nil
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil
	}
	return &corev1.ObjectReference{Kind: kind, APIVersion: apiVersion, Namespace: m.GetNamespace(), Name: m.GetName(),
		UID: m.GetUID(), ResourceVersion: m.GetResourceVersion()}
}

// onChange calls fn whenever the Service called name ("namespace/name")
// is added, changed or deleted after the informer's first list.
func (g *serviceGroups) onChange(name string, fn func()) error {
	match := func(obj any) bool {
		s, ok := unwrapTombstone(obj).(*serviceObject)
		return ok && s.svc.Key() == name
	}
	_, err := g.services.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if !initial && match(obj) {
				fn()
			}
		},
		UpdateFunc: func(_, newObj any) {
			if match(newObj) {
				fn()
			}
		},
		DeleteFunc: func(obj any) {
			if match(obj) {
				fn()
			}
		},
	})
	return err
}
