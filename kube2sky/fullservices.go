package kube2sky

import "strings"

// serviceChunk is how many Services one chunk of a full reconcile's
// Service pass holds at once: their forward records (a headless Service
// has one per endpoint and port), the listing of their keys and their
// Txns.
const serviceChunk = 500

// reconcileServices is the Service pass of a full reconcile: each cached
// Service's subtree svc/<ns>/<name>/, in key order, chunk by chunk
// (reconcileChunks). A Service's PTRs are not in it: the next pass
// writes each PTR for its winner.
func (c *Controller) reconcileServices(t *term) (fullPass, error) {
	return c.reconcileChunks(t, c.services.subtree(), c.services.starts(), c.cfg.serviceChunk, c.serviceChunkGroups)
}

// serviceChunkGroups returns the forward records of the Services whose
// subtrees start with starts ("<ns>/<name>/").
func (c *Controller) serviceChunkGroups(starts []string) map[groupKey]*fullGroup {
	groups := make(map[groupKey]*fullGroup, len(starts))
	for _, s := range starts {
		name := strings.TrimSuffix(s, "/")
		d := c.services.desired(name)
		groups[groupKey{kind: kindService, name: name}] = &fullGroup{want: encodeEntries(d.forward), hold: d.hold}
	}
	return groups
}
