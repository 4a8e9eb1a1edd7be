package kube2sky

import (
	"strings"

	"github.com/kubesky/kubesky/kube2sky/group"
	"github.com/kubesky/kubesky/kube2sky/plan"
	"github.com/kubesky/kubesky/kube2sky/registry/leader"
)

// serviceChunk is how many Services one chunk of a full reconcile's
// Service pass holds at once: their forward records (a headless Service
// has one per endpoint and port), the listing of their keys and their
// Txns.
const serviceChunk = 500

// reconcileServices is the Service pass of a full reconcile: each cached
// Service's subtree svc/<ns>/<name>/, in key order, chunk by chunk
// (reconcileChunks). A Service's PTRs are not in it: the next pass
// writes each PTR for its winner.
func (c *Controller) reconcileServices(t *leader.Term) (fullPass, error) {
	return c.reconcileChunks(t, c.source.ServiceSubtree(), c.source.ServiceStarts(), c.cfg.serviceChunk, c.serviceChunkGroups)
}

// serviceChunkGroups returns the forward records of the Services whose
// subtrees start with starts ("<ns>/<name>/").
func (c *Controller) serviceChunkGroups(starts []string) map[group.Key]*fullGroup {
	groups := make(map[group.Key]*fullGroup, len(starts))
	for _, s := range starts {
		name := strings.TrimSuffix(s, "/")
		key := group.Key{Kind: group.Service, Name: name}
		d := c.source.Desired(key)
		groups[key] = &fullGroup{want: plan.Encode(d.Forward), hold: d.Hold}
	}
	return groups
}
