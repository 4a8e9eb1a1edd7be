package kube2sky

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/kube2sky/records"
)

// podFieldSelector leaves out, on the API server, the pods that never get a
// record: host-network pods (their IP is the node's) and finished ones.
const podFieldSelector = "spec.hostNetwork=false,status.phase!=Succeeded,status.phase!=Failed"

// podObject is a cached Pod: its namespace, its name and the IPs it gets
// records for. It keeps no ObjectMeta (a quarter of a kilobyte each, at
// 150,000 pods a third of what they hold); GetObjectMeta builds one for
// the informer's key function.
type podObject struct {
	namespace, name string
	ips             []netip.Addr
}

// GetObjectMeta makes podObject a metav1.ObjectMetaAccessor, which is what
// the informer's store needs to key it ("<ns>/<name>").
func (p *podObject) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Namespace: p.namespace, Name: p.name}
}

// GetObjectKind and DeepCopyObject make podObject a runtime.Object, so a
// list of them can stand for a PodList (see listPods).
func (p *podObject) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

func (p *podObject) DeepCopyObject() runtime.Object {
	c := *p
	c.ips = slices.Clone(p.ips)
	return &c
}

func (c *Controller) addPodInformer(kube kubernetes.Interface) error {
	pods := kube.CoreV1().Pods(metav1.NamespaceAll)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return listPods(ctx, pods, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.FieldSelector = podFieldSelector
			return pods.Watch(ctx, opts)
		},
	}
	inf := cache.NewSharedIndexInformerWithOptions(lw, &corev1.Pod{}, cache.SharedIndexInformerOptions{})
	_ = inf.SetTransform(transformPod) // fails only once started
	c.extra.podIx = newPodIndex()
	reg, err := inf.AddEventHandler(c.podHandler())
	if err != nil {
		return fmt.Errorf("pod informer: %w", err)
	}
	c.extra.pods, c.extra.podsFed = inf, reg
	return nil
}

// transformPod is the Pod informer's transform. A host-network pod and a
// finished one keep no IPs (the field selector already leaves them out of
// a real API server's answers).
func transformPod(obj any) (any, error) {
	switch o := obj.(type) {
	case *corev1.Pod:
		return newPodObject(o), nil
	case *podObject:
		return o, nil
	}
	return nil, fmt.Errorf("pod informer: unexpected object %T", obj)
}

func newPodObject(p *corev1.Pod) *podObject {
	return &podObject{namespace: p.Namespace, name: p.Name, ips: podIPs(p)}
}

func podIPs(p *corev1.Pod) []netip.Addr {
	if p.Spec.HostNetwork || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return nil
	}
	var out []netip.Addr
	for _, ip := range p.Status.PodIPs {
		a, err := netip.ParseAddr(ip.IP)
		if err == nil && a.Zone() == "" && !a.Is4In6() && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// podAddresses returns a pod's "<ns>/<a-b-c-d>" values.
func podAddresses(p *podObject) []string {
	out := make([]string, len(p.ips))
	for i, ip := range p.ips {
		out[i] = p.namespace + "/" + records.DashedIP(ip)
	}
	return out
}

// podHandler indexes each pod's addresses and enqueues the addresses a pod
// gains or loses. The initial list is only indexed: the first full
// reconcile covers it.
func (c *Controller) podHandler() cache.ResourceEventHandler {
	ix := c.extra.podIx
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if p, ok := obj.(*podObject); ok {
				ix.add(p)
				if !initial {
					c.podsChanged(podAddresses(p))
				}
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(*podObject)
			n, ok2 := newObj.(*podObject)
			if ok1 && ok2 && !slices.Equal(o.ips, n.ips) {
				ix.remove(o)
				ix.add(n)
				c.podsChanged(append(podAddresses(o), podAddresses(n)...))
			}
		},
		DeleteFunc: func(obj any) {
			if p, ok := unwrapTombstone(obj).(*podObject); ok {
				ix.remove(p)
				c.podsChanged(podAddresses(p))
			}
		},
	}
}

func (c *Controller) podsChanged(addresses []string) {
	for _, a := range addresses {
		c.changed(podGroupPrefix+a, time.Time{})
	}
}

// podKey returns the etcd key of "<ns>/<a-b-c-d>".
func (c *Controller) podKey(address string) string {
	return c.extra.podPrefix + address
}

// podDesired returns the record of one pod address: there while any pod in
// the namespace has the address.
func (c *Controller) podDesired(key string) desired {
	address := strings.TrimPrefix(key, podGroupPrefix)
	if c.extra.pods == nil {
		return desired{}
	}
	_, label, _ := strings.Cut(address, "/")
	store := c.extra.pods.GetStore()
	for _, key := range c.extra.podIx.pods(address) {
		obj, ok, err := store.GetByKey(key)
		if err != nil || !ok {
			continue
		}
		for _, ip := range obj.(*podObject).ips {
			if records.DashedIP(ip) == label {
				r := contract.Record{Host: ip.String(), TTL: c.cfg.TTL, Owner: c.owner}
				return desired{forward: []records.Entry{{Key: c.podKey(address), Record: r}}}
			}
		}
	}
	return desired{}
}
