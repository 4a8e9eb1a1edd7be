package kube2sky

import (
	"slices"
	"strings"
	"sync"
)

// ptrIndex knows which Services claim which PTR keys and decides who writes
// each: the claimant whose "namespace/name" sorts first. It also remembers,
// per Service, the PTR keys it last wrote ("held"), so a Service that stops
// claiming a key still looks at it and deletes it.
type ptrIndex struct {
	mu      sync.Mutex
	claims  map[string][]string // PTR key -> claiming Services, sorted
	byClaim map[string][]string // Service -> PTR keys it claims
	held    map[string][]string // Service -> PTR keys it is responsible for
}

func newPTRIndex() *ptrIndex {
	return &ptrIndex{claims: map[string][]string{}, byClaim: map[string][]string{}, held: map[string][]string{}}
}

// set replaces a Service's claims. It returns the other Services that
// became the winner of a key because of the change; they must be
// reconciled to write it.
func (ix *ptrIndex) set(svc string, keys []string) (handoff []string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	old := ix.byClaim[svc]
	for _, k := range old {
		before := ix.winnerLocked(k)
		ix.claims[k] = remove(ix.claims[k], svc)
		if len(ix.claims[k]) == 0 {
			delete(ix.claims, k)
		}
		if after := ix.winnerLocked(k); after != before && after != "" {
			handoff = append(handoff, after)
		}
	}
	for _, k := range keys {
		ix.claims[k] = insert(ix.claims[k], svc)
	}
	if len(keys) == 0 {
		delete(ix.byClaim, svc)
	} else {
		ix.byClaim[svc] = keys
	}
	return handoff
}

// reset replaces every claim at once (a full reconcile) and forgets what
// was held.
func (ix *ptrIndex) reset(claims map[string][]string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.claims = map[string][]string{}
	ix.byClaim = map[string][]string{}
	ix.held = map[string][]string{}
	for svc, keys := range claims {
		if len(keys) == 0 {
			continue
		}
		ix.byClaim[svc] = keys
		for _, k := range keys {
			ix.claims[k] = insert(ix.claims[k], svc)
		}
	}
}

// winner returns the Service that writes key, "" when nobody claims it.
func (ix *ptrIndex) winner(key string) string {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.winnerLocked(key)
}

func (ix *ptrIndex) winnerLocked(key string) string {
	if c := ix.claims[key]; len(c) > 0 {
		return c[0]
	}
	return ""
}

// responsible returns the PTR keys a Service must read: its claims and the
// keys it held.
func (ix *ptrIndex) responsible(svc string) []string {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	keys := slices.Concat(ix.byClaim[svc], ix.held[svc])
	slices.Sort(keys)
	return slices.Compact(keys)
}

// hold records the PTR keys a Service is responsible for after a
// successful write; extra keys add to its claims (keys it must still clean).
func (ix *ptrIndex) hold(svc string, extra []string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	keys := ix.byClaim[svc] // shared: claims are replaced, never changed in place
	if len(extra) > 0 {
		keys = slices.Concat(keys, extra)
	}
	if len(keys) == 0 {
		delete(ix.held, svc)
		return
	}
	ix.held[svc] = keys
}

func insert(sorted []string, s string) []string {
	i, found := slices.BinarySearch(sorted, s)
	if found {
		return sorted
	}
	return slices.Insert(sorted, i, s)
}

func remove(sorted []string, s string) []string {
	i, found := slices.BinarySearch(sorted, s)
	if !found {
		return sorted
	}
	return slices.Delete(sorted, i, i+1)
}

// serviceKey joins a namespace and a name into a queue key.
func serviceKey(namespace, name string) string {
	return namespace + "/" + name
}

// splitServiceKey is serviceKey's inverse.
func splitServiceKey(key string) (namespace, name string) {
	namespace, name, _ = strings.Cut(key, "/")
	return namespace, name
}
