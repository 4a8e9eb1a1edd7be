// Package kubedns turns kube-dns's ConfigMap (kube-system/kube-dns) into
// the records skydns reads its forwarding settings from, so that a cluster
// moving from kube-dns keeps its ConfigMap as it is.
//
// kube-dns read two keys, each a JSON document:
//
//	stubDomains:         {"acme.local": ["1.2.3.4", "10.0.0.53:5353"]}
//	upstreamNameservers: ["8.8.8.8", "8.8.4.4:53"]
//
// For zone cluster.local. and prefix /skydns they become SkyDNS stub
// records and a dns/config record:
//
//	/skydns/local/cluster/dns/stub/local/acme/ns1 = {"host":"1.2.3.4","port":53}
//	/skydns/local/cluster/dns/stub/local/acme/ns2 = {"host":"10.0.0.53","port":5353}
//	/skydns/local/cluster/dns/config/upstream     = {"text":"8.8.8.8:53,8.8.4.4:53"}
//
// Other keys (kube-dns's federations) are ignored.
package kubedns

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/kube2sky/records"
)

// The ConfigMap keys kube-dns read.
const (
	KeyStubDomains         = "stubDomains"
	KeyUpstreamNameservers = "upstreamNameservers"
)

// Config says where the records go.
type Config struct {
	Prefix string // etcd prefix, "/skydns"
	Zone   string // the cluster domain, "cluster.local."
	Owner  string // stamped on every record
}

// Records returns the records of a kube-dns ConfigMap's data, sorted by
// key, and one error per entry that is not valid, naming it. A ConfigMap
// with any invalid entry must not be applied in part: the caller keeps
// what it applied last.
func Records(cfg Config, data map[string]string) ([]records.Entry, []error) {
	var out []records.Entry
	var errs []error
	if raw, ok := data[KeyStubDomains]; ok {
		stubs, more := stubRecords(cfg, raw)
		out, errs = append(out, stubs...), append(errs, more...)
	}
	if raw, ok := data[KeyUpstreamNameservers]; ok {
		up, err := upstreamRecord(cfg, raw)
		if err != nil {
			errs = append(errs, err)
		} else if up != nil {
			out = append(out, *up)
		}
	}
	slices.SortFunc(out, func(a, b records.Entry) int { return strings.Compare(a.Key, b.Key) })
	return out, errs
}

// stubRecords parses stubDomains: one record per domain and server.
func stubRecords(cfg Config, raw string) ([]records.Entry, []error) {
	var stubs map[string][]string
	if err := json.Unmarshal([]byte(raw), &stubs); err != nil {
		return nil, []error{fmt.Errorf("%s: not a JSON object of domain to [\"ip[:port]\", ...]: %v", KeyStubDomains, err)}
	}
	var out []records.Entry
	var errs []error
	for _, domain := range sortedKeys(stubs) {
		entries, err := stubDomain(cfg, domain, stubs[domain])
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %q: %w", KeyStubDomains, domain, err))
			continue
		}
		out = append(out, entries...)
	}
	return out, errs
}

func stubDomain(cfg Config, domain string, servers []string) ([]records.Entry, error) {
	fqdn := strings.ToLower(strings.TrimSuffix(domain, ".")) + "."
	zone := strings.TrimSuffix(cfg.Zone, ".") + "."
	switch {
	case !contract.ValidDomain(fqdn):
		return nil, fmt.Errorf("not a domain name")
	case fqdn == zone || strings.HasSuffix(fqdn, "."+zone):
		return nil, fmt.Errorf("inside the cluster domain %s", zone)
	case len(servers) == 0:
		return nil, fmt.Errorf("no server")
	}
	var out []records.Entry
	for i, s := range servers {
		ap, err := parseServer(s)
		if err != nil {
			return nil, err
		}
		name := "ns" + strconv.Itoa(i+1) + "." + fqdn + "stub.dns." + zone
		out = append(out, records.Entry{Key: contract.Key(cfg.Prefix, name),
			Record: contract.Record{Host: ap.Addr().String(), Port: int(ap.Port()), Owner: cfg.Owner}})
	}
	return out, nil
}

// upstreamRecord parses upstreamNameservers into the upstream setting's
// record; nil for an empty list.
func upstreamRecord(cfg Config, raw string) (*records.Entry, error) {
	var servers []string
	if err := json.Unmarshal([]byte(raw), &servers); err != nil {
		return nil, fmt.Errorf("%s: not a JSON list of \"ip[:port]\": %v", KeyUpstreamNameservers, err)
	}
	if len(servers) == 0 {
		return nil, nil
	}
	addrs := make([]string, len(servers))
	for i, s := range servers {
		ap, err := parseServer(s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", KeyUpstreamNameservers, err)
		}
		addrs[i] = ap.String()
	}
	name := "upstream.config.dns." + strings.TrimSuffix(cfg.Zone, ".") + "."
	return &records.Entry{Key: contract.Key(cfg.Prefix, name),
		Record: contract.Record{Text: strings.Join(addrs, ","), Owner: cfg.Owner}}, nil
}

// parseServer reads "ip" (port 53) or "ip:port" ("[ip6]:port").
func parseServer(s string) (netip.AddrPort, error) {
	if a, err := netip.ParseAddr(s); err == nil {
		return netip.AddrPortFrom(a.Unmap(), 53), nil
	}
	ap, err := netip.ParseAddrPort(s)
	if err != nil || ap.Port() == 0 {
		return netip.AddrPort{}, fmt.Errorf("server %q: want ip or ip:port", s)
	}
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), nil
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
