package explain

import (
	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/kube2sky/records"
)

// The kinds of object a key can stand for.
const (
	KindService = "Service"
	// KindZone is the zone itself: its dns-version record.
	KindZone = "Zone"
)

// ObjectRef names the object a record is written for.
type ObjectRef struct {
	Kind      string
	Namespace string
	Name      string
}

// String is "Service default/web" or "Zone cluster.local.".
func (o ObjectRef) String() string {
	if o.Namespace == "" {
		return o.Kind + " " + o.Name
	}
	return o.Kind + " " + o.Namespace + "/" + o.Name
}

// objectOfKey returns the object an owned key is written for: a Service
// from the labels after svc/ of a forward key or from a PTR key's target,
// or the zone for its dns-version key. Other keys (pod addresses, hosts)
// name no object explain checks.
func objectOfKey(z records.Zone, kv KV) (ObjectRef, bool) {
	if kv.Key == z.DNSVersionKey() {
		return ObjectRef{Kind: KindZone, Name: z.Domain()}, true
	}
	if z.IsReverseKey(kv.Key) {
		r, err := contract.Decode(kv.Key, []byte(kv.Value))
		if err != nil {
			return ObjectRef{}, false
		}
		ns, name, ok := z.ServiceOfTarget(r.Host)
		return ObjectRef{Kind: KindService, Namespace: ns, Name: name}, ok
	}
	ns, name, ok := z.ServiceOfKey(kv.Key)
	return ObjectRef{Kind: KindService, Namespace: ns, Name: name}, ok
}

// serviceOfName returns the Service a forward name is, or is below:
// web.default.svc.<zone>. and _http._tcp.web.default.svc.<zone>. are
// default/web's, so it is checked even when etcd holds none of its keys.
func serviceOfName(z records.Zone, q Query) (ObjectRef, bool) {
	if _, wildcard := q.readPrefix(); q.Reverse || wildcard {
		return ObjectRef{}, false
	}
	ns, name, ok := z.ServiceOfKey(q.Key + "/-")
	if !ok || !contract.ValidLabel(ns) || !contract.ValidLabel(name) {
		return ObjectRef{}, false
	}
	return ObjectRef{Kind: KindService, Namespace: ns, Name: name}, true
}

// objectsOf returns, in first-seen order, the objects q's owned keys stand
// for (the name's own Service first), and the keys of each.
func objectsOf(z records.Zone, q Query, keys []KV) ([]ObjectRef, map[ObjectRef][]KV) {
	var refs []ObjectRef
	byRef := map[ObjectRef][]KV{}
	add := func(ref ObjectRef) {
		if _, seen := byRef[ref]; !seen {
			refs = append(refs, ref)
			byRef[ref] = nil
		}
	}
	if ref, ok := serviceOfName(z, q); ok {
		add(ref)
	}
	for _, kv := range keys {
		if kv.Owner != z.Owner() {
			continue
		}
		if ref, ok := objectOfKey(z, kv); ok {
			add(ref)
			byRef[ref] = append(byRef[ref], kv)
		}
	}
	return refs, byRef
}

// uncheckedOwned counts the owned keys that stand for no object explain
// checks: pod addresses, hosts, the kube-dns ConfigMap's records.
func uncheckedOwned(z records.Zone, keys []KV) int {
	n := 0
	for _, kv := range keys {
		if _, ok := objectOfKey(z, kv); kv.Owner == z.Owner() && !ok {
			n++
		}
	}
	return n
}
