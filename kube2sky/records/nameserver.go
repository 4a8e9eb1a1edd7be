package records

import (
	"net/netip"
	"strconv"

	"github.com/kubesky/kubesky/contract"
)

// NameServerKeyPrefix returns the key prefix of the zone's name server
// records, "/skydns/local/cluster/dns/ns/": skydns answers the apex NS from
// them, each address record as the name its key makes (ns1.ns.dns.<zone>).
func (z Zone) NameServerKeyPrefix() string { return z.zoneKey + "/dns/ns/" }

// NameServers returns the zone's name server records for the cluster DNS
// Service: ns1, ns2, ... under NameServerKeyPrefix, one per usable cluster
// IP in the Service's order (the primary family first), so that the apex
// NS names resolve to where the cluster's DNS answers. A Service without a
// cluster IP (headless, ExternalName, not allocated yet) gives none; its
// unusable addresses are the Service's own Problems (Build reports them).
func NameServers(z Zone, svc Service) []Entry {
	if svc.Type == TypeExternalName || svc.Headless() {
		return nil
	}
	var out []Entry
	for _, raw := range svc.ClusterIPs {
		addr, err := netip.ParseAddr(raw)
		if err != nil || unusableAddr(addr) != "" {
			continue
		}
		key := z.NameServerKeyPrefix() + "ns" + strconv.Itoa(len(out)+1)
		out = append(out, Entry{Key: key, Record: z.record(contract.Record{Host: addr.String()})})
	}
	return out
}
