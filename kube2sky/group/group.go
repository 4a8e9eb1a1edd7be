// Package group is the vocabulary the parts of kube2sky share: a record
// group's key (what the work queue holds), the records a group should
// have, and where in etcd its keys lie. A group is a set of keys
// reconciled together: one Service, one pod address, the hosts
// ConfigMap, the kube-dns ConfigMap, the zone's name servers, or the zone
// itself. The package has no I/O and no state.
package group

import (
	"cmp"
	"log/slog"
	"strings"

	"github.com/kubesky/kubesky/kube2sky/records"
)

// Kind is a kind of record group. The kinds sort in this order, so a
// Service wins a PTR it shares with a host.
type Kind uint8

const (
	Zone       Kind = iota // the zone itself: dns-version, and owned keys no other group explains
	Service                // one Service
	Hosts                  // every host record and its PTRs
	KubeDNS                // the kube-dns ConfigMap's stub domains and upstreams
	NameServer             // the DNS Service's addresses as the zone's name servers
	Pod                    // one pod address
)

// Key is what the work queue holds: a group of keys reconciled together.
type Key struct {
	Kind Kind
	// Name is a Service's "namespace/name", a pod address's
	// "<ns>/<a-b-c-d>", "" for the groups of which there is one.
	Name string
}

// Compare orders group keys by kind, then by name.
func (k Key) Compare(o Key) int {
	return cmp.Or(cmp.Compare(k.Kind, o.Kind), cmp.Compare(k.Name, o.Name))
}

// String is the key as the log shows it.
func (k Key) String() string {
	switch k.Kind {
	case Service:
		return k.Name
	case Pod:
		return "pod/" + k.Name
	case Hosts:
		return "hosts"
	case KubeDNS:
		return "kube-dns"
	case NameServer:
		return "name-servers"
	}
	return "zone"
}

// LogValue makes a key a string in every log format.
func (k Key) LogValue() slog.Value { return slog.StringValue(k.String()) }

// ServiceKey is the group of the Service namespace/name.
func ServiceKey(namespace, name string) Key {
	return Key{Kind: Service, Name: namespace + "/" + name}
}

// SplitServiceName splits a Service group's name.
func SplitServiceName(name string) (namespace, svc string) {
	namespace, svc, _ = strings.Cut(name, "/")
	return namespace, svc
}

// Scope is where a group's keys are: every key under each prefix, and
// the single keys.
type Scope struct {
	Prefixes []string
	Keys     []string
}

// Desired is what one group should have in etcd.
type Desired struct {
	Forward []records.Entry // under the group's scope
	PTR     []records.Entry // PTR claims; written only where the group wins
	Hold    bool            // leave the group's keys as etcd has them
}

// SplitPTRs splits entries into forward records and PTR claims.
func SplitPTRs(zone records.Zone, entries []records.Entry) Desired {
	reverse := 0
	for _, e := range entries {
		if zone.IsReverseKey(e.Key) {
			reverse++
		}
	}
	d := Desired{Forward: make([]records.Entry, 0, len(entries)-reverse), PTR: make([]records.Entry, 0, reverse)}
	for _, e := range entries {
		if zone.IsReverseKey(e.Key) {
			d.PTR = append(d.PTR, e)
		} else {
			d.Forward = append(d.Forward, e)
		}
	}
	return d
}

// EntryKeys returns the keys of entries.
func EntryKeys(entries []records.Entry) []string {
	keys := make([]string, len(entries))
	for i, e := range entries {
		keys[i] = e.Key
	}
	return keys
}
