package kube2sky

import (
	"context"
	"strings"
	"sync"

	"github.com/kubesky/kubesky/kube2sky/hosts"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Records beyond Services are reconciled like Services: each group of keys
// has a queue key, a desired set, and a scope of keys it reads and owns. A
// queue key of these groups starts with "~", which no "namespace/name" of a
// Service does, and sorts after them, so a Service wins a PTR it shares
// with a host.
const (
	podGroupPrefix = "~pod/"  // "~pod/<ns>/<a-b-c-d>": one pod address
	hostsGroup     = "~hosts" // every host record and its PTRs
)

// extraRecords is the controller's state for pod and host records.
type extraRecords struct {
	pods    cache.SharedIndexInformer // nil unless --pod-records=verified
	podIx   *podIndex                 // the pods' addresses, kept by the pod informer's handler
	podsFed cache.ResourceEventHandlerRegistration
	hosts   cache.SharedIndexInformer // nil unless --hosts-configmap
	kubeDNS *kubeDNSConfig            // nil unless --kube-dns-configmap

	podPrefix    string // "/skydns/local/cluster/pod/"
	hostsPrefix  string // "/skydns/local/cluster/hosts/"
	domainPrefix string // the --hosts-domain key prefix, "" for none
	hostsCfg     hosts.Config

	hostsNamespace, hostsName string
	report                    *hostsReport
	invalidLines              prometheus.Gauge
	hostAddresses             prometheus.Gauge
}

// addExtraRecords sets up the informers the extra records need.
func (c *Controller) addExtraRecords(kube kubernetes.Interface) error {
	zoneKey := c.zone.ZoneKeyPrefix()
	c.extra = &extraRecords{
		podPrefix:    zoneKey + "pod/",
		hostsPrefix:  zoneKey + "hosts/",
		domainPrefix: c.cfg.hostsDomainPrefix(),
		hostsCfg: hosts.Config{Prefix: c.cfg.Prefix, Domain: "hosts." + c.zone.Domain(), ExtraDomain: c.cfg.HostsDomain,
			TTL: c.cfg.TTL, Owner: c.owner},
	}
	c.extra.registerMetrics(c.metrics.registry)
	if c.cfg.PodRecords == PodsVerified {
		if err := c.addPodInformer(kube); err != nil {
			return err
		}
	}
	if c.cfg.KubeDNSConfigMap != "" {
		if err := c.addKubeDNSInformer(kube); err != nil {
			return err
		}
	}
	if c.cfg.HostsConfigMap != "" {
		return c.addHostsInformer(kube)
	}
	return nil
}

// runExtraRecords runs the extra informers until ctx ends.
func (c *Controller) runExtraRecords(ctx context.Context, wg *sync.WaitGroup) {
	for _, inf := range c.extra.informers() {
		wg.Go(func() { inf.RunWithContext(ctx) })
	}
}

// extraSynced reports whether the extra informers have listed everything,
// and the pod informer's handler has indexed every pod of its first list.
func (c *Controller) extraSynced() bool {
	for _, inf := range c.extra.informers() {
		if !inf.HasSynced() {
			return false
		}
	}
	return c.extra.podsFed == nil || c.extra.podsFed.HasSynced()
}

func (e *extraRecords) informers() []cache.SharedIndexInformer {
	var out []cache.SharedIndexInformer
	all := []cache.SharedIndexInformer{e.pods, e.hosts}
	if e.kubeDNS != nil {
		all = append(all, e.kubeDNS.informer)
	}
	for _, inf := range all {
		if inf != nil {
			out = append(out, inf)
		}
	}
	return out
}

// groupOfForward returns the queue key of the group a key under the zone
// (or under --hosts-domain) belongs to: its Service, a pod address, the
// hosts, or "" (the zone itself).
func (c *Controller) groupOfForward(key string) string {
	if ns, name, ok := c.zone.ServiceOfKey(key); ok {
		return serviceKey(ns, name)
	}
	e := c.extra
	if rest, ok := strings.CutPrefix(key, e.podPrefix); ok {
		ns, rest, _ := strings.Cut(rest, "/")
		label, _, _ := strings.Cut(rest, "/")
		if ns != "" && label != "" {
			return podGroupPrefix + ns + "/" + label
		}
		return ""
	}
	if strings.HasPrefix(key, e.hostsPrefix) || (e.domainPrefix != "" && strings.HasPrefix(key, e.domainPrefix)) {
		return hostsGroup
	}
	if e.kubeDNS.isKubeDNSKey(key) {
		return kubeDNSGroup
	}
	return ""
}

// extraDesired returns the desired records of a pod or hosts group; ok is
// false for a Service's key.
func (c *Controller) extraDesired(key string) (d desired, ok bool) {
	switch {
	case strings.HasPrefix(key, podGroupPrefix):
		return c.podDesired(key), true
	case key == hostsGroup:
		return c.hostsDesired(), true
	case key == kubeDNSGroup:
		return c.kubeDNSDesired(), true
	}
	return desired{}, false
}

// readGroup reads what etcd holds of a group: a Service's subtree, a pod
// address's key, or the hosts' subtrees; plus the PTR keys it claims or
// held.
func (c *Controller) readGroup(ctx context.Context, key string) (current, error) {
	ptrs := c.ptrs.responsible(key)
	switch {
	case strings.HasPrefix(key, podGroupPrefix):
		k := c.podKey(strings.TrimPrefix(key, podGroupPrefix))
		return c.store.read(ctx, k+"/", append(ptrs, k))
	case key == hostsGroup:
		return c.readHosts(ctx, ptrs)
	case key == kubeDNSGroup:
		return c.readKubeDNS(ctx)
	}
	ns, name := splitServiceKey(key)
	return c.store.read(ctx, c.zone.ServiceKeyPrefix(ns, name), ptrs)
}

func (c *Controller) readHosts(ctx context.Context, ptrs []string) (current, error) {
	cur, err := c.store.read(ctx, c.extra.hostsPrefix, ptrs)
	if err != nil || c.extra.domainPrefix == "" {
		return cur, err
	}
	more, err := c.store.read(ctx, c.extra.domainPrefix, nil)
	for k, v := range more {
		cur[k] = v
	}
	return cur, err
}

// scanExtra calls fn, in a full reconcile, with the keys under the
// --hosts-domain prefix (everything else lives under the zone, which the
// full reconcile lists anyway).
func (c *Controller) scanExtra(ctx context.Context, fn func(key string, value []byte, modRev int64)) error {
	if c.extra.domainPrefix == "" {
		return nil
	}
	return c.store.scan(ctx, c.extra.domainPrefix, fn)
}

// addExtraGroups adds, in a full reconcile, the desired records and PTR
// claims of every pod address and of the hosts.
func (c *Controller) addExtraGroups(groups map[string]*fullGroup, claims map[string][]string, ptrs map[string][]desiredKV) {
	var keys []string
	if c.extra.pods != nil {
		for _, v := range c.extra.podIx.addresses() {
			keys = append(keys, podGroupPrefix+v)
		}
	}
	if c.extra.hosts != nil {
		keys = append(keys, hostsGroup)
	}
	if c.extra.kubeDNS != nil {
		keys = append(keys, kubeDNSGroup)
	}
	for _, key := range keys {
		d, _ := c.extraDesired(key)
		addGroup(groups, claims, ptrs, key, d)
	}
}
