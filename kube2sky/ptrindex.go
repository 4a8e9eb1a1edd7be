package kube2sky

import (
	"slices"
	"sync"
)

// ptrIndex knows which groups (Services, the hosts) claim which PTR keys
// and decides who writes each: the claimant whose key sorts first (a
// Service before the hosts, then by "namespace/name"). It also remembers,
// per group, the PTR keys it last wrote ("held"), so a group that stops
// claiming a key still looks at it and deletes it.
type ptrIndex struct {
	mu      sync.Mutex
	claims  map[string][]groupKey // PTR key -> claiming groups, sorted
	byClaim map[groupKey][]string // group -> PTR keys it claims
	held    map[groupKey][]string // group -> PTR keys it is responsible for
}

func newPTRIndex() *ptrIndex {
	return &ptrIndex{claims: map[string][]groupKey{}, byClaim: map[groupKey][]string{}, held: map[groupKey][]string{}}
}

// set replaces a group's claims. It returns the other groups that
// became the winner of a key because of the change; they must be
// reconciled to write it.
func (ix *ptrIndex) set(group groupKey, keys []string) (handoff []groupKey) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	old := ix.byClaim[group]
	for _, k := range old {
		before := ix.winnerLocked(k)
		ix.claims[k] = remove(ix.claims[k], group)
		if len(ix.claims[k]) == 0 {
			delete(ix.claims, k)
		}
		if after := ix.winnerLocked(k); after != before && after != (groupKey{}) {
			handoff = append(handoff, after)
		}
	}
	for _, k := range keys {
		ix.claims[k] = insert(ix.claims[k], group)
	}
	if len(keys) == 0 {
		delete(ix.byClaim, group)
	} else {
		ix.byClaim[group] = keys
	}
	return handoff
}

// reset replaces every claim at once (a full reconcile) and forgets what
// was held.
func (ix *ptrIndex) reset(claims map[groupKey][]string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.claims = map[string][]groupKey{}
	ix.byClaim = map[groupKey][]string{}
	ix.held = map[groupKey][]string{}
	for group, keys := range claims {
		if len(keys) == 0 {
			continue
		}
		ix.byClaim[group] = keys
		for _, k := range keys {
			ix.claims[k] = insert(ix.claims[k], group)
		}
	}
}

// winner returns the group that writes key, the zero key when nobody
// claims it.
func (ix *ptrIndex) winner(key string) groupKey {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.winnerLocked(key)
}

func (ix *ptrIndex) winnerLocked(key string) groupKey {
	if c := ix.claims[key]; len(c) > 0 {
		return c[0]
	}
	return groupKey{}
}

// responsible returns the PTR keys a Service must read: its claims and the
// keys it held.
func (ix *ptrIndex) responsible(group groupKey) []string {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	keys := slices.Concat(ix.byClaim[group], ix.held[group])
	slices.Sort(keys)
	return slices.Compact(keys)
}

// hold records the PTR keys a Service is responsible for after a
// successful write; extra keys add to its claims (keys it must still clean).
func (ix *ptrIndex) hold(group groupKey, extra []string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	keys := ix.byClaim[group] // shared: claims are replaced, never changed in place
	if len(extra) > 0 {
		keys = slices.Concat(keys, extra)
	}
	if len(keys) == 0 {
		delete(ix.held, group)
		return
	}
	ix.held[group] = keys
}

func insert(sorted []groupKey, k groupKey) []groupKey {
	i, found := slices.BinarySearchFunc(sorted, k, groupKey.compare)
	if found {
		return sorted
	}
	return slices.Insert(sorted, i, k)
}

func remove(sorted []groupKey, k groupKey) []groupKey {
	i, found := slices.BinarySearchFunc(sorted, k, groupKey.compare)
	if !found {
		return sorted
	}
	return slices.Delete(sorted, i, i+1)
}
