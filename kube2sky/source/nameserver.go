package source

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/kubesky/kubesky/kube2sky/group"
	"github.com/kubesky/kubesky/kube2sky/records"
)

// nameServerGroup is the zone's name server records: the cluster IPs of
// the --dns-service Service (the kube-dns Service) under dns/ns/, so that
// the zone apex's NS names resolve to the address pods query. One group.
type nameServerGroup struct {
	services  *serviceGroups
	ref       string // namespace/name of the DNS Service
	keyPrefix string
	zone      records.Zone
	log       *slog.Logger
	warned    lastReport // the Service's type and IPs last warned of having no cluster IP
}

var _ wholeKind = (*nameServerGroup)(nil)

// newNameServerGroup follows the Service --dns-service names, through the
// Service informer; nil without one.
func newNameServerGroup(services *serviceGroups, cfg Config, log *slog.Logger, changed func(group.Key, time.Time)) (*nameServerGroup, error) {
	if cfg.DNSService == "" {
		return nil, nil
	}
	key := group.Key{Kind: group.NameServer}
	if err := services.onChange(cfg.DNSService, func() { changed(key, time.Time{}) }); err != nil {
		return nil, err
	}
	zone := cfg.Zone
	return &nameServerGroup{services: services, ref: cfg.DNSService, zone: zone,
		keyPrefix: zone.NameServerKeyPrefix(), log: log.With("dns-service", cfg.DNSService)}, nil
}

// desired is the Service's cluster IPs as nsN records; none while the
// Service does not exist or has no cluster IP.
func (n *nameServerGroup) desired(string) group.Desired {
	svc, ok := n.services.service(n.ref)
	if !ok {
		return group.Desired{}
	}
	entries := records.NameServers(n.zone, *svc)
	missing := ""
	if len(entries) == 0 {
		missing = fmt.Sprint(svc.Type, svc.ClusterIPs)
	}
	if n.warned.changed(missing) && missing != "" {
		n.log.Warn("the DNS Service has no cluster IP; the zone's name server records are removed", "type", svc.Type, "clusterIPs", svc.ClusterIPs)
	}
	return group.Desired{Forward: entries}
}

func (n *nameServerGroup) eachDesired(fn func(name string, d group.Desired)) { fn("", n.desired("")) }

func (n *nameServerGroup) scope(string) group.Scope {
	return group.Scope{Prefixes: []string{n.keyPrefix}}
}

func (n *nameServerGroup) prefixes() []string { return []string{n.keyPrefix} }

// groupOfKey reports whether key is a name server record.
func (n *nameServerGroup) groupOfKey(key string) (group.Key, bool) {
	return group.Key{Kind: group.NameServer}, strings.HasPrefix(key, n.keyPrefix)
}
