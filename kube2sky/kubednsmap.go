package kube2sky

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/kubesky/kubesky/kube2sky/kubedns"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
)

// kubeDNSGroup is the queue key of the records of the kube-dns ConfigMap:
// the stub domains and the upstream setting.
const kubeDNSGroup = "~kube-dns"

// reasonInvalidKubeDNSConfig is the Event reason on a kube-dns ConfigMap
// that cannot be applied.
const reasonInvalidKubeDNSConfig = "InvalidKubeDNSConfig"

// kubeDNSConfig is the controller's state for the --kube-dns-configmap.
type kubeDNSConfig struct {
	informer    cache.SharedIndexInformer
	ref         string   // namespace/name
	prefixes    []string // the key prefixes its records live under
	cfg         kubedns.Config
	recorder    record.EventRecorder // set by startEvents, before any reconcile
	log         *slog.Logger
	mu          sync.Mutex // guards lastUID and lastProblem
	lastUID     types.UID
	lastProblem string
}

// addKubeDNSInformer watches the ConfigMap --kube-dns-configmap names.
func (c *Controller) addKubeDNSInformer(kube kubernetes.Interface) error {
	ns, name, err := splitConfigMapRef(c.cfg.KubeDNSConfigMap)
	if err != nil {
		return err
	}
	inf, err := c.configMapInformer(kube, ns, name, kubeDNSGroup)
	if err != nil {
		return err
	}
	zoneKey := c.zone.ZoneKeyPrefix()
	c.extra.kubeDNS = &kubeDNSConfig{informer: inf, ref: c.cfg.KubeDNSConfigMap,
		prefixes: []string{zoneKey + "dns/stub/", zoneKey + "dns/config/"},
		cfg:      kubedns.Config{Prefix: c.cfg.Prefix, Zone: c.zone.Domain(), Owner: c.owner},
		log:      c.log.With("configmap", c.cfg.KubeDNSConfigMap)}
	return nil
}

// isKubeDNSKey reports whether key is where the kube-dns ConfigMap's
// records live.
func (k *kubeDNSConfig) isKubeDNSKey(key string) bool {
	return k != nil && slices.ContainsFunc(k.prefixes, func(p string) bool { return strings.HasPrefix(key, p) })
}

// kubeDNSDesired is the records of the ConfigMap. One that has an invalid
// entry holds the group: what etcd has (the last good settings) stays.
// Without the ConfigMap there are none.
func (c *Controller) kubeDNSDesired() desired {
	k := c.extra.kubeDNS
	var cm *hostsObject
	if obj, ok, err := k.informer.GetIndexer().GetByKey(k.ref); err == nil && ok {
		cm = obj.(*hostsObject)
	}
	if cm == nil {
		k.report(nil, nil)
		return desired{}
	}
	entries, errs := kubedns.Records(k.cfg, cm.data)
	k.report(cm, errs)
	if len(errs) > 0 {
		return desired{hold: true}
	}
	return c.desiredFrom(entries)
}

// report logs and records an Event for the ConfigMap's problems when they
// changed since the last call.
func (k *kubeDNSConfig) report(cm *hostsObject, errs []error) {
	var uid types.UID
	if cm != nil {
		uid = cm.UID
	}
	msgs := make([]string, len(errs))
	for i, err := range errs {
		msgs[i] = err.Error()
	}
	problem := strings.Join(msgs, "; ")
	k.mu.Lock()
	defer k.mu.Unlock()
	if uid == k.lastUID && problem == k.lastProblem {
		return
	}
	k.lastUID, k.lastProblem = uid, problem
	if problem == "" {
		return
	}
	for _, m := range msgs {
		k.log.Warn("kube-dns ConfigMap not applied, the last good settings stay", "problem", m)
	}
	if k.recorder != nil {
		k.recorder.Event(configMapRef(cm), corev1.EventTypeWarning, reasonInvalidKubeDNSConfig,
			truncateMessage(fmt.Sprintf("not applied, the last good settings stay: %s", problem)))
	}
}

// truncateMessage cuts s to what an Event holds.
func truncateMessage(s string) string {
	if len(s) <= maxEventMessage {
		return s
	}
	return s[:maxEventMessage-len(" ... (see kube2sky's log)")] + " ... (see kube2sky's log)"
}

// readKubeDNS reads what etcd holds under the ConfigMap's prefixes.
func (c *Controller) readKubeDNS(ctx context.Context) (current, error) {
	out := current{}
	for _, p := range c.extra.kubeDNS.prefixes {
		cur, err := c.store.read(ctx, p, nil)
		if err != nil {
			return nil, err
		}
		for k, v := range cur {
			out[k] = v
		}
	}
	return out, nil
}
