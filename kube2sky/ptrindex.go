package kube2sky

import (
	"slices"
	"sync"

	"github.com/kubesky/kubesky/kube2sky/group"
)

// ptrIndex knows which groups (Services, the hosts) claim which PTR keys
// and decides who writes each: the claimant whose key sorts first (a
// Service before the hosts, then by "namespace/name"). It also remembers,
// per group, the PTR keys it last wrote ("held"), so a group that stops
// claiming a key still looks at it and deletes it.
type ptrIndex struct {
	mu      sync.Mutex
	claims  map[string][]group.Key // PTR key -> claiming groups, sorted
	byClaim map[group.Key][]string // group -> PTR keys it claims
	held    map[group.Key][]string // group -> PTR keys it is responsible for
}

func newPTRIndex() *ptrIndex {
	return &ptrIndex{claims: map[string][]group.Key{}, byClaim: map[group.Key][]string{}, held: map[group.Key][]string{}}
}

// set replaces a group's claims. It returns the other groups that
// became the winner of a key because of the change; they must be
// reconciled to write it.
func (ix *ptrIndex) set(claimant group.Key, keys []string) (handoff []group.Key) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	old := ix.byClaim[claimant]
	for _, k := range old {
		before := ix.winnerLocked(k)
		ix.claims[k] = remove(ix.claims[k], claimant)
		if len(ix.claims[k]) == 0 {
			delete(ix.claims, k)
		}
		if after := ix.winnerLocked(k); after != before && after != (group.Key{}) {
			handoff = append(handoff, after)
		}
	}
	for _, k := range keys {
		ix.claims[k] = insert(ix.claims[k], claimant)
	}
	if len(keys) == 0 {
		delete(ix.byClaim, claimant)
	} else {
		ix.byClaim[claimant] = keys
	}
	return handoff
}

// reset replaces every claim at once (a full reconcile) and forgets what
// was held.
func (ix *ptrIndex) reset(claims map[group.Key][]string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.claims = map[string][]group.Key{}
	ix.byClaim = map[group.Key][]string{}
	ix.held = map[group.Key][]string{}
	for claimant, keys := range claims {
		if len(keys) == 0 {
			continue
		}
		ix.byClaim[claimant] = keys
		for _, k := range keys {
			ix.claims[k] = insert(ix.claims[k], claimant)
		}
	}
}

// winner returns the group that writes key, the zero key when nobody
// claims it.
func (ix *ptrIndex) winner(key string) group.Key {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.winnerLocked(key)
}

func (ix *ptrIndex) winnerLocked(key string) group.Key {
	if c := ix.claims[key]; len(c) > 0 {
		return c[0]
	}
	return group.Key{}
}

// responsible returns the PTR keys a Service must read: its claims and the
// keys it held.
func (ix *ptrIndex) responsible(claimant group.Key) []string {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	keys := slices.Concat(ix.byClaim[claimant], ix.held[claimant])
	slices.Sort(keys)
	return slices.Compact(keys)
}

// hold records the PTR keys a Service is responsible for after a
// successful write; extra keys add to its claims (keys it must still clean).
func (ix *ptrIndex) hold(claimant group.Key, extra []string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	keys := ix.byClaim[claimant] // shared: claims are replaced, never changed in place
	if len(extra) > 0 {
		keys = slices.Concat(keys, extra)
	}
	if len(keys) == 0 {
		delete(ix.held, claimant)
		return
	}
	ix.held[claimant] = keys
}

func insert(sorted []group.Key, k group.Key) []group.Key {
	i, found := slices.BinarySearchFunc(sorted, k, group.Key.Compare)
	if found {
		return sorted
	}
	return slices.Insert(sorted, i, k)
}

func remove(sorted []group.Key, k group.Key) []group.Key {
	i, found := slices.BinarySearchFunc(sorted, k, group.Key.Compare)
	if !found {
		return sorted
	}
	return slices.Delete(sorted, i, i+1)
}
