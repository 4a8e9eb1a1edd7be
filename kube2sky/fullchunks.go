package kube2sky

import (
	"context"

	"github.com/kubesky/kubesky/kube2sky/group"
	"github.com/kubesky/kubesky/kube2sky/registry/leader"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// reconcileChunks is a pass of a full reconcile over the groups whose keys
// lie under prefix, chunk by chunk: starts are the groups' own key
// prefixes relative to prefix, sorted; each chunk's desired records
// (build) are filed against its range of etcd's keys (keyChunks) and
// written before the next chunk is built. A key in the range that no group
// of the chunk explains is filed with the group it belongs to, or the zone
// group, and deleted when kube2sky owns it.
func (c *Controller) reconcileChunks(t *leader.Term, prefix string, starts []string, size int,
	build func(starts []string) map[group.Key]*fullGroup) (fullPass, error) {
	var pass fullPass
	for _, ch := range keyChunks(prefix, starts, size) {
		p, err := c.reconcileGroups(t, build(ch.starts), func(ctx context.Context, groups map[group.Key]*fullGroup) (int, error) {
			return c.fileRange(ctx, groups, ch.from, ch.end)
		})
		if err != nil {
			return fullPass{}, err
		}
		pass.add(p)
	}
	return pass, nil
}

// keyChunk is a chunk of a pass: some groups' key starts, and the range of
// keys (from included, end excluded) listed against them.
type keyChunk struct {
	starts    []string
	from, end string
}

// keyChunks splits sorted starts into chunks of at most size, each with the
// range of keys from its first start to the next chunk's first (the first
// chunk from prefix, the last to the end of prefix's subtree). The ranges
// tile the subtree, so every key under prefix is listed once, and every
// key that begins with prefix and a start lies in that start's chunk, as
// long as no start is a prefix of a later one. There is always at least
// one chunk.
func keyChunks(prefix string, starts []string, size int) []keyChunk {
	var out []keyChunk
	from := prefix
	for {
		n := min(size, len(starts))
		end := clientv3.GetPrefixRangeEnd(prefix)
		if n < len(starts) {
			end = prefix + starts[n]
		}
		out = append(out, keyChunk{starts: starts[:n], from: from, end: end})
		if n == len(starts) {
			return out
		}
		starts, from = starts[n:], end
	}
}

// fileRange lists etcd's keys from from to end and files each with its
// group, as fileRest does. It returns how many keys it saw.
func (c *Controller) fileRange(ctx context.Context, groups map[group.Key]*fullGroup, from, end string) (int, error) {
	seen := 0
	err := c.store.ScanRange(ctx, from, end, c.fileForward(groups, wantIndex(groups), &seen))
	return seen, err
}
