package forward

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/skydns/snapshot"
)

// StubKeyPrefix returns the etcd key prefix, ending in "/", below which the
// stub-domain records of zone live (SkyDNS's layout):
// StubKeyPrefix("/skydns", "cluster.local.") is
// "/skydns/local/cluster/dns/stub/".
func StubKeyPrefix(prefix, zone string) string {
	return contract.Key(prefix, "stub.dns."+strings.TrimPrefix(zone, ".")) + "/"
}

// StubFromRecord reads one stub-domain record of zone: the key
// <StubKeyPrefix>/corp/example/ns1 with the value {"host":"10.0.0.53","port":53}
// says that example.corp. is served by 10.0.0.53:53. The last key label
// only tells a domain's servers apart; a port of 0 means 53. The host must
// be an IP address, and the domain may not be the zone or inside it.
func StubFromRecord(prefix, zone, key string, r contract.Record) (domain, server string, err error) {
	domain, err = stubDomainOfKey(prefix, zone, key)
	if err != nil {
		return "", "", err
	}
	addr, err := netip.ParseAddr(r.Host)
	if err != nil {
		return "", "", fmt.Errorf("stub record %s: host %q is not an IP address", key, r.Host)
	}
	port := uint16(53)
	if r.Port > 0 && r.Port <= 65535 {
		port = uint16(r.Port)
	}
	return domain, netip.AddrPortFrom(addr.Unmap(), port).String(), nil
}

// stubDomainOfKey returns the domain a stub record's key names.
func stubDomainOfKey(prefix, zone, key string) (string, error) {
	base := StubKeyPrefix(prefix, zone)
	rest, ok := strings.CutPrefix(key, base)
	segments := strings.Split(rest, "/")
	if !ok || len(segments) < 2 || strings.Contains(rest, "//") {
		return "", fmt.Errorf("stub record %s: want %s<domain reversed>/<label>", key, base)
	}
	name, _ := contract.Name("/", "/"+strings.Join(segments[:len(segments)-1], "/"))
	domain, err := stubDomain(name)
	if err != nil {
		return "", fmt.Errorf("stub record %s: %w", key, err)
	}
	if zoneName := strings.ToLower(strings.TrimSuffix(zone, ".")) + "."; domain == zoneName || strings.HasSuffix(domain, "."+zoneName) {
		return "", fmt.Errorf("stub record %s: %s is inside the zone %s", key, domain, zoneName)
	}
	return domain, nil
}

// StubsFromSnapshot collects the stub domains of each zone from snap's
// dns/stub records, in the form SetStubs takes. Records that do not make a
// stub are returned as errors naming their keys.
func StubsFromSnapshot(snap *snapshot.Snapshot, zones []string) (map[string][]string, []error) {
	stubs := map[string][]string{}
	var errs []error
	for _, zone := range zones {
		for _, e := range snap.Lookup("stub.dns." + strings.TrimPrefix(dns.Fqdn(zone), ".")) {
			domain, server, err := StubFromRecord(snap.Prefix(), zone, e.Key(), e.Record)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			stubs[domain] = append(stubs[domain], server)
		}
	}
	return stubs, errs
}

// SetStubsFrom makes the dns/stub records of zones in snap the server's stub
// domains. The server calls it with every snapshot it publishes; bad
// records are logged once, and an unchanged set costs a lookup and a
// comparison.
func (f *Forwarder) SetStubsFrom(snap *snapshot.Snapshot, zones []string) {
	stubs, errs := StubsFromSnapshot(snap, zones)
	problems := make([]string, len(errs))
	for i, err := range errs {
		problems[i] = err.Error()
	}
	f.setStubs(stubs, problems)
}
