package kube2sky

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/kubesky/kubesky/kube2sky/hosts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// hostsObject is a cached ConfigMap (the hosts or the kube-dns one): its
// identity (for events) and its data.
type hostsObject struct {
	metav1.ObjectMeta
	data map[string]string
}

// addHostsInformer watches the one ConfigMap named by --hosts-configmap.
func (c *Controller) addHostsInformer(kube kubernetes.Interface) error {
	ns, name, err := splitConfigMapRef(c.cfg.HostsConfigMap)
	if err != nil {
		return err
	}
	c.extra.hostsNamespace, c.extra.hostsName = ns, name
	inf, err := c.configMapInformer(kube, ns, name, hostsGroup)
	if err != nil {
		return err
	}
	c.extra.hosts = inf
	c.extra.report = newHostsReport(c.log, c.metrics, c.extra)
	return nil
}

// configMapInformer watches the one ConfigMap ns/name, and enqueues group
// when it changes.
func (c *Controller) configMapInformer(kube kubernetes.Interface, ns, name, group string) (cache.SharedIndexInformer, error) {
	selector := fields.OneTermEqualSelector("metadata.name", name).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.FieldSelector = selector
			return kube.CoreV1().ConfigMaps(ns).List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.FieldSelector = selector
			return kube.CoreV1().ConfigMaps(ns).Watch(ctx, opts)
		},
	}
	inf := cache.NewSharedIndexInformerWithOptions(lw, &corev1.ConfigMap{}, cache.SharedIndexInformerOptions{})
	_ = inf.SetTransform(transformConfigMap)
	if _, err := inf.AddEventHandler(c.configMapHandler(name, group)); err != nil {
		return nil, fmt.Errorf("configmap informer: %w", err)
	}
	return inf, nil
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

// configMapHandler enqueues group when the ConfigMap called name changes.
// The initial list is left to the first full reconcile.
func (c *Controller) configMapHandler(name, group string) cache.ResourceEventHandler {
	mine := func(obj any) bool {
		h, ok := unwrapTombstone(obj).(*hostsObject)
		return ok && h.Name == name // a fake API server ignores field selectors
	}
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if mine(obj) && !initial {
				c.changed(group, time.Time{})
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, n := oldObj.(*hostsObject), newObj.(*hostsObject)
			if mine(newObj) && (o.UID != n.UID || !maps.Equal(o.data, n.data)) {
				c.changed(group, time.Time{})
			}
		},
		DeleteFunc: func(obj any) {
			if mine(obj) {
				c.changed(group, time.Time{})
			}
		},
	}
}

// hostsDesired parses the ConfigMap into records and reports its bad
// lines. Without the ConfigMap (or --hosts-configmap) there are none.
func (c *Controller) hostsDesired() desired {
	if c.extra.hosts == nil {
		return desired{}
	}
	var cm *hostsObject
	var data map[string]string
	if obj, ok, err := c.extra.hosts.GetIndexer().GetByKey(c.cfg.HostsConfigMap); err == nil && ok {
		cm = obj.(*hostsObject)
		data = cm.data
	}
	entries, problems := hosts.Records(c.extra.hostsCfg, data)
	c.extra.report.report(cm, problems, len(entries))
	return c.desiredFrom(entries)
}
