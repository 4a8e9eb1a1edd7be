package kube2sky

// podChunk is how many pod addresses one chunk of a full reconcile's pod
// pass holds at once: their desired records, the listing of their keys
// and their Txns, a few hundred bytes an address.
const podChunk = 2000

// reconcilePods is the pod pass of a full reconcile: the addresses in key
// order, chunk by chunk (reconcileChunks); an address is its key relative
// to pod/. A key no pod address explains (every key, without
// --pod-records=verified) is deleted like an orphan Service's. A pod
// address has no PTR.
func (c *Controller) reconcilePods(t *term) (fullPass, error) {
	return c.reconcileChunks(t, c.pods.prefix, c.pods.addresses(), podChunk, c.podChunkGroups)
}

// podChunkGroups returns the desired record of each of addresses, a group
// each.
func (c *Controller) podChunkGroups(addresses []string) map[groupKey]*fullGroup {
	groups := make(map[groupKey]*fullGroup, len(addresses))
	for _, a := range addresses {
		key := groupKey{kind: kindPod, name: a}
		d := c.pods.desired(a)
		groups[key] = &fullGroup{want: encodeEntries(d.forward), hold: d.hold}
	}
	return groups
}
