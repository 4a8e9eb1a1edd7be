package explain

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/client-go/kubernetes"

	"github.com/kubesky/kubesky/kube2sky/records"
)

// Sources are where Explain looks.
type Sources struct {
	// Etcd holds the records; required.
	Etcd clientv3.KV
	// Kube fetches the objects; nil leaves them unchecked.
	Kube kubernetes.Interface
	// Replicas are the skydns replicas asked.
	Replicas []Replica
	// Zone is how kube2sky writes (domain, prefix, TTL, owner), for the
	// builder's records.
	Zone records.Zone
	// MaxKeys bounds the keys read below the name.
	MaxKeys int64
	// Timeout bounds each request.
	Timeout time.Duration
	// TCP asks the replicas over TCP only.
	TCP bool
}

// Report is everything Explain found for one query.
type Report struct {
	Query   Query
	Owner   string
	Keys    Keys
	Objects []ObjectCheck
	// Unchecked counts the owned keys that stand for no object checked.
	Unchecked int
	Replicas  []ReplicaState
}

// Explain reads the query's keys from etcd, checks the objects they stand
// for and asks every replica. Only a failed etcd read is an error; what
// else fails is reported in its place.
func Explain(ctx context.Context, src Sources, q Query) (Report, error) {
	rep := Report{Query: q, Owner: src.Zone.Owner()}
	readCtx, cancel := context.WithTimeout(ctx, src.Timeout)
	keys, err := readKeys(readCtx, src.Etcd, q, src.MaxKeys)
	cancel()
	if errors.Is(err, context.DeadlineExceeded) {
		return Report{}, fmt.Errorf("etcd unreachable: no answer within %s", src.Timeout)
	}
	if err != nil {
		return Report{}, err
	}
	rep.Keys = keys
	rep.Replicas = observeAll(ctx, src.Replicas, q, asking{timeout: src.Timeout, tcp: src.TCP})
	rep.Unchecked = uncheckedOwned(src.Zone, keys.KVs)
	refs, byRef := objectsOf(src.Zone, q, keys.KVs)
	for _, ref := range refs {
		objCtx, cancel := context.WithTimeout(ctx, src.Timeout)
		rep.Objects = append(rep.Objects, checkObject(objCtx, src.Kube, src.Zone, q, ref, byRef[ref]))
		cancel()
	}
	return rep, nil
}

// observeAll observes every replica at once; the states keep their order.
func observeAll(ctx context.Context, replicas []Replica, q Query, how asking) []ReplicaState {
	out := make([]ReplicaState, len(replicas))
	var wg sync.WaitGroup
	for i, r := range replicas {
		wg.Go(func() { out[i] = observe(ctx, r, q, how) })
	}
	wg.Wait()
	return out
}
