package source

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"
	"unique"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/kube2sky/group"
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

// podGroups are the records of pod addresses (--pod-records=verified): a
// group per "<ns>/<a-b-c-d>", the key pod/<ns>/<a-b-c-d>. Without
// --pod-records=verified they have no records, and the owned keys left
// under pod/ are deleted.
type podGroups struct {
	pods    cache.SharedIndexInformer // nil unless --pod-records=verified
	index   *podIndex                 // the pods' addresses, kept by the pod informer's handler
	prefix  string                    // "/skydns/local/cluster/pod/"
	ttl     uint32
	owner   string
	changed func(group.Key, time.Time)
}

var _ recordGroup = (*podGroups)(nil)

// newPodGroups adds the pod informer to set when verified is true. The
// handler's registration must have synced too: it indexes the first list.
func newPodGroups(kube kubernetes.Interface, set *informerSet, cfg Config, changed func(group.Key, time.Time)) (*podGroups, error) {
	g := &podGroups{prefix: cfg.Zone.ZoneKeyPrefix() + "pod/", ttl: cfg.TTL, owner: cfg.Owner, changed: changed}
	if !cfg.VerifiedPods {
		return g, nil
	}
	g.index = newPodIndex()
	inf, reg, err := set.add(g.podSpec(kube))
	if err != nil {
		return nil, err
	}
	set.synced = append(set.synced, reg.HasSynced)
	g.pods = inf
	return g, nil
}

func (g *podGroups) podSpec(kube kubernetes.Interface) informerSpec {
	pods := kube.CoreV1().Pods(metav1.NamespaceAll)
	return informerSpec{
		what:    "pod",
		example: &corev1.Pod{},
		list: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return listPods(ctx, pods, opts)
		},
		watch: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.FieldSelector = podFieldSelector
			return pods.Watch(ctx, opts)
		},
		transform: transformPod,
		handler:   g.podHandler(),
	}
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
	return &podObject{namespace: unique.Make(p.Namespace).Value(), name: p.Name, ips: podIPs(p)}
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
func (g *podGroups) podHandler() cache.ResourceEventHandler {
	ix := g.index
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if p, ok := obj.(*podObject); ok {
				ix.add(p)
				if !initial {
					g.podsChanged(podAddresses(p))
				}
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(*podObject)
			n, ok2 := newObj.(*podObject)
			if ok1 && ok2 && !slices.Equal(o.ips, n.ips) {
				ix.remove(o)
				ix.add(n)
				g.podsChanged(append(podAddresses(o), podAddresses(n)...))
			}
		},
		DeleteFunc: func(obj any) {
			if p, ok := unwrapTombstone(obj).(*podObject); ok {
				ix.remove(p)
				g.podsChanged(podAddresses(p))
			}
		},
	}
}

func (g *podGroups) podsChanged(addresses []string) {
	for _, a := range addresses {
		g.changed(group.Key{Kind: group.Pod, Name: a}, time.Time{})
	}
}

// key returns the etcd key of "<ns>/<a-b-c-d>".
func (g *podGroups) key(address string) string {
	return g.prefix + address
}

// desired is the record of one pod address: there while any pod in the
// namespace has the address.
func (g *podGroups) desired(address string) group.Desired {
	if g.pods == nil {
		return group.Desired{}
	}
	_, label, _ := strings.Cut(address, "/")
	for _, p := range g.index.pods(address) {
		for _, ip := range p.ips {
			if records.DashedIP(ip) == label {
				r := contract.Record{Host: ip.String(), TTL: g.ttl, Owner: g.owner}
				return group.Desired{Forward: []records.Entry{{Key: g.key(address), Record: r}}}
			}
		}
	}
	return group.Desired{}
}

// addresses returns every indexed pod address, sorted; none without
// --pod-records=verified.
func (g *podGroups) addresses() []string {
	if g.pods == nil {
		return nil
	}
	out := g.index.addresses()
	slices.Sort(out)
	return out
}

// scope is the address's key, and anything under it.
func (g *podGroups) scope(address string) group.Scope {
	k := g.key(address)
	return group.Scope{Prefixes: []string{k + "/"}, Keys: []string{k}}
}

func (g *podGroups) prefixes() []string { return []string{g.prefix} }

// groupOfKey returns the address of a key under pod/; a key that names no
// address is the zone group's.
func (g *podGroups) groupOfKey(key string) (group.Key, bool) {
	rest, ok := strings.CutPrefix(key, g.prefix)
	if !ok {
		return group.Key{}, false
	}
	ns, rest, _ := strings.Cut(rest, "/")
	label, _, _ := strings.Cut(rest, "/")
	if ns != "" && label != "" {
		return group.Key{Kind: group.Pod, Name: ns + "/" + label}, true
	}
	return group.Key{}, true
}
