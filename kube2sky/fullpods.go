package kube2sky

import (
	"github.com/kubesky/kubesky/kube2sky/group"
	"github.com/kubesky/kubesky/kube2sky/plan"
	"github.com/kubesky/kubesky/kube2sky/registry/leader"
)

// podChunk is how many pod addresses one chunk of a full reconcile's pod
// pass holds at once: their desired records, the listing of their keys
// and their Txns, a few hundred bytes an address.
const podChunk = 2000

// reconcilePods is the pod pass of a full reconcile: the addresses in key
// order, chunk by chunk (reconcileChunks); an address is its key relative
// to pod/. A key no pod address explains (every key, without
// --pod-records=verified) is deleted like an orphan Service's. A pod
// address has no PTR.
func (c *Controller) reconcilePods(t *leader.Term) (fullPass, error) {
	return c.reconcileChunks(t, c.source.PodPrefix(), c.source.PodAddresses(), podChunk, c.podChunkGroups)
}

// podChunkGroups returns the desired record of each of addresses, a group
// each.
func (c *Controller) podChunkGroups(addresses []string) map[group.Key]*fullGroup {
	groups := make(map[group.Key]*fullGroup, len(addresses))
	for _, a := range addresses {
		key := group.Key{Kind: group.Pod, Name: a}
		d := c.source.Desired(key)
		groups[key] = &fullGroup{want: plan.Encode(d.Forward), hold: d.Hold}
	}
	return groups
}
