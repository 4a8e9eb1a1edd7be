package explain

import (
	"context"
	"encoding/json"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// KV is one etcd key at or below the name's key.
type KV struct {
	Key            string
	Value          string
	CreateRevision int64
	ModRevision    int64
	// Owner is the value's "owner" field: the kube2sky that wrote it, ""
	// for a record added by hand.
	Owner string
}

// Keys is what etcd holds for a query, read at one revision.
type Keys struct {
	// Revision is etcd's current revision when the keys were read.
	Revision int64
	KVs      []KV
	// More is true when more keys than the limit lie below the name.
	More bool
}

// MaxMod is the highest mod revision of the keys: a replica that has
// applied it serves every one of them as shown.
func (k Keys) MaxMod() int64 {
	var m int64
	for _, kv := range k.KVs {
		m = max(m, kv.ModRevision)
	}
	return m
}

// readKeys reads q's exact key and, for a forward name, up to limit keys
// below it (below the labels before its first wildcard, keeping those the
// name matches), in one transaction so that both are at one revision.
func readKeys(ctx context.Context, kv clientv3.KV, q Query, limit int64) (Keys, error) {
	prefix, wildcard := q.readPrefix()
	var ops []clientv3.Op
	if !wildcard {
		ops = append(ops, clientv3.OpGet(q.Key))
	}
	if !q.Reverse {
		ops = append(ops, clientv3.OpGet(prefix+"/", clientv3.WithPrefix(), clientv3.WithLimit(limit),
			clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend)))
	}
	resp, err := kv.Txn(ctx).Then(ops...).Commit()
	if err != nil {
		return Keys{}, fmt.Errorf("reading %s from etcd: %w", q.Key, err)
	}
	out := Keys{Revision: resp.Header.Revision}
	for _, r := range resp.Responses {
		get := r.GetResponseRange()
		out.More = out.More || get.More
		for _, ev := range get.Kvs {
			if q.InScope(string(ev.Key)) {
				out.KVs = append(out.KVs, kvFrom(ev))
			}
		}
	}
	return out, nil
}

func kvFrom(ev *mvccpb.KeyValue) KV {
	return KV{Key: string(ev.Key), Value: string(ev.Value),
		CreateRevision: ev.CreateRevision, ModRevision: ev.ModRevision, Owner: ownerOf(ev.Value)}
}

// ownerOf is the value's owner field, "" when it has none or is not JSON.
func ownerOf(value []byte) string {
	var v struct {
		Owner string `json:"owner"`
	}
	if json.Unmarshal(value, &v) != nil {
		return ""
	}
	return v.Owner
}
