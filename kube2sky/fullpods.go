package kube2sky

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// podChunk is how many pod addresses one chunk of a full reconcile's pod
// pass holds at once: their desired records, the listing of their keys
// and their Txns, a few hundred bytes an address.
const podChunk = 2000

// reconcilePods is the pod pass of a full reconcile: the addresses in key
// order, chunk by chunk, each chunk's desired records against its range of
// etcd's pod keys (podChunks). A key no pod address explains (every key,
// without --pod-records=verified) is deleted like an orphan Service's. A
// pod address has no PTR.
func (c *Controller) reconcilePods(t *term) (fullPass, error) {
	var pass fullPass
	for _, ch := range podChunks(c.pods.prefix, c.pods.addresses(), podChunk) {
		p, err := c.reconcileGroups(t, c.podChunkGroups(ch.addresses), func(ctx context.Context, groups map[groupKey]*fullGroup) (int, error) {
			return c.filePodRange(ctx, groups, ch.from, ch.end)
		})
		if err != nil {
			return fullPass{}, err
		}
		pass.add(p)
	}
	return pass, nil
}

// podChunkRange is a chunk of the pod pass: some addresses, and the range
// of keys (from included, end excluded) listed against them.
type podChunkRange struct {
	addresses []string
	from, end string
}

// podChunks splits sorted addresses into chunks of at most size, each with
// the range of keys from its first address to the next chunk's first (the
// first chunk from prefix, the last to the end of prefix's subtree). The
// ranges tile the subtree, so every key under prefix is listed once, and
// each address's own key lies in its chunk's range. There is always at
// least one chunk.
func podChunks(prefix string, addresses []string, size int) []podChunkRange {
	var out []podChunkRange
	from := prefix
	for {
		n := min(size, len(addresses))
		end := clientv3.GetPrefixRangeEnd(prefix)
		if n < len(addresses) {
			end = prefix + addresses[n]
		}
		out = append(out, podChunkRange{addresses: addresses[:n], from: from, end: end})
		if n == len(addresses) {
			return out
		}
		addresses, from = addresses[n:], end
	}
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

// filePodRange lists etcd's keys from from to end and files each with its
// group, as fileCurrent does. It returns how many keys it saw.
func (c *Controller) filePodRange(ctx context.Context, groups map[groupKey]*fullGroup, from, end string) (int, error) {
	seen := 0
	err := c.store.scanRange(ctx, from, end, c.fileForward(groups, wantIndex(groups), &seen))
	return seen, err
}
