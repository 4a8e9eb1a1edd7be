package source

import (
	"log/slog"
	"maps"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kubesky/kubesky/kube2sky/group"
	"github.com/kubesky/kubesky/kube2sky/hosts"
	"github.com/kubesky/kubesky/kube2sky/records"
)

// hostsObject is a cached ConfigMap (the hosts or the kube-dns one): its
// identity (for events) and its data.
type hostsObject struct {
	metav1.ObjectMeta
	data map[string]string
}

// hostsGroup is the records of the --hosts-configmap ConfigMap: one group,
// every host record and its PTRs, under hosts.<zone> and --hosts-domain.
// Without --hosts-configmap it has no records, and the owned keys left
// under hosts/ are deleted.
type hostsGroup struct {
	hosts        cache.SharedIndexInformer // nil unless --hosts-configmap
	ref          string                    // the ConfigMap's "namespace/name"
	zone         records.Zone
	prefix       string // "/skydns/local/cluster/hosts/"
	domainPrefix string // the --hosts-domain key prefix, "" for none
	cfg          hosts.Config
	report       *hostsReport // nil unless --hosts-configmap

	mu sync.Mutex
	// corefileHosts is the hosts text of the last usable Corefile the
	// ConfigMap held under hosts.CorefileKey.
	corefileHosts string
}

var _ recordGroup = (*hostsGroup)(nil)

// newHostsGroup watches the one ConfigMap named by --hosts-configmap, if
// any.
func newHostsGroup(kube kubernetes.Interface, set *informerSet, cfg Config, m Metrics, log *slog.Logger,
	changed func(group.Key, time.Time)) (*hostsGroup, error) {
	zone := cfg.Zone
	g := &hostsGroup{ref: cfg.HostsConfigMap, zone: zone, prefix: zone.ZoneKeyPrefix() + "hosts/",
		domainPrefix: cfg.hostsDomainPrefix(),
		cfg: hosts.Config{Prefix: cfg.Prefix, Domain: "hosts." + zone.Domain(), ExtraDomain: cfg.HostsDomain,
			TTL: cfg.TTL, Owner: cfg.Owner}}
	if cfg.HostsConfigMap == "" {
		return g, nil
	}
	var err error
	if g.hosts, err = set.addConfigMap(kube, cfg.HostsConfigMap, group.Key{Kind: group.Hosts}, changed); err != nil {
		return nil, err
	}
	g.report = newHostsReport(log, m, g)
	return g, nil
}

// desired parses the ConfigMap into records and reports its bad lines.
// Without the ConfigMap (or --hosts-configmap) there are none.
func (g *hostsGroup) desired(string) group.Desired {
	if g.hosts == nil {
		return group.Desired{}
	}
	cm := configMapObject(g.hosts, g.ref)
	var data map[string]string
	if cm != nil {
		data = cm.data
	}
	data, refused := g.readCorefile(data)
	entries, problems := hosts.Records(g.cfg, data)
	if refused != nil {
		problems = append([]hosts.Problem{*refused}, problems...)
	}
	g.report.report(cm, problems, len(entries))
	return group.SplitPTRs(g.zone, entries)
}

// readCorefile returns data with a Corefile (CoreDNS's ConfigMap) replaced
// by its hosts entries, or by the last usable Corefile's while this one is
// refused, and the problem that refused it.
func (g *hostsGroup) readCorefile(data map[string]string) (map[string]string, *hosts.Problem) {
	text, ok := data[hosts.CorefileKey]
	if !ok {
		return data, nil
	}
	entries, refused := hosts.FromCorefile(text, g.cfg.ExtraDomain, data)
	g.mu.Lock()
	if refused == nil {
		g.corefileHosts = entries
	}
	entries = g.corefileHosts
	g.mu.Unlock()
	data = maps.Clone(data)
	data[hosts.CorefileKey] = entries
	return data, refused
}

func (g *hostsGroup) eachDesired(fn func(name string, d group.Desired)) {
	if g.hosts != nil {
		fn("", g.desired(""))
	}
}

func (g *hostsGroup) scope(string) group.Scope { return group.Scope{Prefixes: g.prefixes()} }

// prefixes is hosts/ under the zone, and the --hosts-domain.
func (g *hostsGroup) prefixes() []string {
	if g.domainPrefix == "" {
		return []string{g.prefix}
	}
	return []string{g.prefix, g.domainPrefix}
}

func (g *hostsGroup) groupOfKey(key string) (group.Key, bool) {
	if strings.HasPrefix(key, g.prefix) || (g.domainPrefix != "" && strings.HasPrefix(key, g.domainPrefix)) {
		return group.Key{Kind: group.Hosts}, true
	}
	return group.Key{}, false
}
