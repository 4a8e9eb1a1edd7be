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
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/kube2sky/records"
)

// byPodAddress indexes pods by "<ns>/<a-b-c-d>", one value per pod IP.
const byPodAddress = "podaddress"

// podFieldSelector leaves out, on the API server, the pods that never get a
// record: host-network pods (their IP is the node's) and finished ones.
const podFieldSelector = "spec.hostNetwork=false,status.phase!=Succeeded,status.phase!=Failed"

// podObject is a cached Pod: its name, namespace and the IPs it gets
// records for.
type podObject struct {
	metav1.ObjectMeta
	ips []netip.Addr
}

func (c *Controller) addPodInformer(kube kubernetes.Interface) error {
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.FieldSelector = podFieldSelector
			return kube.CoreV1().Pods(metav1.NamespaceAll).List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.FieldSelector = podFieldSelector
			return kube.CoreV1().Pods(metav1.NamespaceAll).Watch(ctx, opts)
		},
	}
	inf := cache.NewSharedIndexInformerWithOptions(lw, &corev1.Pod{}, cache.SharedIndexInformerOptions{
		Indexers: cache.Indexers{byPodAddress: podAddressIndex},
	})
	_ = inf.SetTransform(transformPod) // fails only once started
	if _, err := inf.AddEventHandler(c.podHandler()); err != nil {
		return fmt.Errorf("pod informer: %w", err)
	}
	c.extra.pods = inf
	return nil
}

// transformPod is the Pod informer's transform. A host-network pod and a
// finished one keep no IPs (the field selector already leaves them out of
// a real API server's answers).
func transformPod(obj any) (any, error) {
	switch o := obj.(type) {
	case *corev1.Pod:
		return &podObject{ObjectMeta: cacheMeta(&o.ObjectMeta), ips: podIPs(o)}, nil
	case *podObject:
		return o, nil
	}
	return nil, fmt.Errorf("pod informer: unexpected object %T", obj)
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

func podAddressIndex(obj any) ([]string, error) {
	p, ok := obj.(*podObject)
	if !ok {
		return nil, nil
	}
	return podAddresses(p), nil
}

// podAddresses returns a pod's "<ns>/<a-b-c-d>" values.
func podAddresses(p *podObject) []string {
	out := make([]string, len(p.ips))
	for i, ip := range p.ips {
		out[i] = p.Namespace + "/" + records.DashedIP(ip)
	}
	return out
}

// podHandler enqueues the addresses a pod gains or loses. The initial list
// is left to the first full reconcile.
func (c *Controller) podHandler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if p, ok := obj.(*podObject); ok && !initial {
				c.podsChanged(podAddresses(p))
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(*podObject)
			n, ok2 := newObj.(*podObject)
			if ok1 && ok2 && !slices.Equal(o.ips, n.ips) {
				c.podsChanged(append(podAddresses(o), podAddresses(n)...))
			}
		},
		DeleteFunc: func(obj any) {
			if p, ok := unwrapTombstone(obj).(*podObject); ok {
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
	objs, err := c.extra.pods.GetIndexer().ByIndex(byPodAddress, address)
	if err != nil || len(objs) == 0 {
		return desired{}
	}
	_, label, _ := strings.Cut(address, "/")
	for _, ip := range objs[0].(*podObject).ips {
		if records.DashedIP(ip) == label {
			r := contract.Record{Host: ip.String(), TTL: c.cfg.TTL, Owner: c.owner}
			return desired{forward: []records.Entry{{Key: c.podKey(address), Record: r}}}
		}
	}
	return desired{}
}
