package kube2sky

import (
	"context"
	"sync"

	"github.com/kubesky/kubesky/kube2sky/group"
	"github.com/kubesky/kubesky/kube2sky/plan"
	"github.com/kubesky/kubesky/kube2sky/registry"
	"github.com/kubesky/kubesky/kube2sky/registry/leader"
	"github.com/kubesky/kubesky/kube2sky/source"
)

// The parts the loop works with, each as the loop uses it.

// cluster is what the cluster says (source.Source): what each group
// should hold, and where its keys lie.
type cluster interface {
	// Run starts the informers; WaitForSync waits until they have listed
	// everything.
	Run(ctx context.Context, wg *sync.WaitGroup)
	WaitForSync(ctx context.Context) bool
	ServiceCount() int
	Desired(key group.Key) group.Desired
	Scope(key group.Key) group.Scope
	// EachWhole calls fn with every group but the pod addresses.
	EachWhole(fn func(key group.Key, d group.Desired))
	// GroupOf returns the group a forward key belongs to, the zone group
	// when no other.
	GroupOf(key string) group.Key
	PrefixesOutsideZone() []string
	// The subtrees the full reconcile walks in chunks, and the starts of
	// their groups' keys in key order.
	ServiceSubtree() string
	ServiceStarts() []string
	PodPrefix() string
	PodAddresses() []string
}

// recordStore is what etcd holds (registry.Store): reads, listings, and
// Txns conditioned on a fence and on every key being as read.
type recordStore interface {
	Read(ctx context.Context, prefix string, keys []string) (plan.Current, error)
	Scan(ctx context.Context, prefix string, fn func(key string, value []byte, modRev int64)) error
	ScanRange(ctx context.Context, from, end string, fn func(key string, value []byte, modRev int64)) error
	Commit(ctx context.Context, f registry.Fence, batch []plan.Change) error
	MaxOps() int
}

// reachability is whether etcd answers (registry.Probe).
type reachability interface {
	Run(ctx context.Context)
	Reachable() bool
	// Reconnected receives when etcd answers again after an outage.
	Reconnected() <-chan struct{}
}

// leadership is who may write (leader.Elector): it serves each term won,
// and the workers wait for the current one.
type leadership interface {
	Campaign(ctx context.Context, serve func(*leader.Term))
	LeadAlone(ctx context.Context, serve func(*leader.Term))
	Wait(ctx context.Context) (*leader.Term, error)
	Role() leader.Role
}

var (
	_ cluster      = (*source.Source)(nil)
	_ recordStore  = (*registry.Store)(nil)
	_ reachability = (*registry.Probe)(nil)
	_ leadership   = (*leader.Elector)(nil)
)
