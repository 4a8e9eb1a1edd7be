package source

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/kubesky/kubesky/kube2sky/group"
	"github.com/kubesky/kubesky/kube2sky/kubedns"
	"github.com/kubesky/kubesky/kube2sky/records"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
)

// ReasonInvalidKubeDNSConfig is the Event reason on a kube-dns ConfigMap
// that cannot be applied.
const ReasonInvalidKubeDNSConfig = "InvalidKubeDNSConfig"

// kubeDNSGroup is the records of the --kube-dns-configmap ConfigMap: one
// group, the stub domains and the upstream setting.
type kubeDNSGroup struct {
	informer    cache.SharedIndexInformer
	ref         string   // namespace/name
	keyPrefixes []string // the key prefixes its records live under
	zone        records.Zone
	cfg         kubedns.Config
	recorder    record.EventRecorder // set by startEvents, before any reconcile
	log         *slog.Logger
	reported    lastReport // the ConfigMap (UID) and problems last reported
}

var _ recordGroup = (*kubeDNSGroup)(nil)

// newKubeDNSGroup watches the ConfigMap --kube-dns-configmap names; nil
// without one.
func newKubeDNSGroup(kube kubernetes.Interface, set *informerSet, cfg Config, log *slog.Logger,
	changed func(group.Key, time.Time)) (*kubeDNSGroup, error) {
	if cfg.KubeDNSConfigMap == "" {
		return nil, nil
	}
	inf, err := set.addConfigMap(kube, cfg.KubeDNSConfigMap, group.Key{Kind: group.KubeDNS}, changed)
	if err != nil {
		return nil, err
	}
	zone := cfg.Zone
	zoneKey := zone.ZoneKeyPrefix()
	return &kubeDNSGroup{informer: inf, ref: cfg.KubeDNSConfigMap, zone: zone,
		keyPrefixes: []string{zoneKey + "dns/stub/", zoneKey + "dns/config/"},
		cfg:         kubedns.Config{Prefix: cfg.Prefix, Zone: zone.Domain(), Owner: cfg.Owner},
		log:         log.With("configmap", cfg.KubeDNSConfigMap)}, nil
}

// desired is the records of the ConfigMap. One that has an invalid entry
// holds the group: what etcd has (the last good settings) stays. Without
// the ConfigMap there are none.
func (k *kubeDNSGroup) desired(string) group.Desired {
	cm := configMapObject(k.informer, k.ref)
	if cm == nil {
		k.report(nil, nil)
		return group.Desired{}
	}
	entries, errs := kubedns.Records(k.cfg, cm.data)
	k.report(cm, errs)
	if len(errs) > 0 {
		return group.Desired{Hold: true}
	}
	return group.SplitPTRs(k.zone, entries)
}

func (k *kubeDNSGroup) eachDesired(fn func(name string, d group.Desired)) { fn("", k.desired("")) }

func (k *kubeDNSGroup) scope(string) group.Scope { return group.Scope{Prefixes: k.keyPrefixes} }

func (k *kubeDNSGroup) prefixes() []string { return k.keyPrefixes }

// groupOfKey reports whether key is where the ConfigMap's records live.
func (k *kubeDNSGroup) groupOfKey(key string) (group.Key, bool) {
	ok := slices.ContainsFunc(k.keyPrefixes, func(p string) bool { return strings.HasPrefix(key, p) })
	return group.Key{Kind: group.KubeDNS}, ok
}

// report logs and records an Event for the ConfigMap's problems when they
// changed since the last call.
func (k *kubeDNSGroup) report(cm *hostsObject, errs []error) {
	var uid types.UID
	if cm != nil {
		uid = cm.UID
	}
	msgs := make([]string, len(errs))
	for i, err := range errs {
		msgs[i] = err.Error()
	}
	problem := strings.Join(msgs, "; ")
	if !k.reported.changed(string(uid)+"\n"+problem) || problem == "" {
		return
	}
	for _, m := range msgs {
		k.log.Warn("kube-dns ConfigMap not applied, the last good settings stay", "problem", m)
	}
	if k.recorder != nil {
		k.recorder.Event(configMapRef(cm), corev1.EventTypeWarning, ReasonInvalidKubeDNSConfig,
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
