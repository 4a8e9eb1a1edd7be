package relay

import (
	"context"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
)

// ReadOnlyKV serves Range and read-only Txns through next and refuses
// every request that writes, with etcd's own PermissionDenied, so clients
// see rpctypes.ErrPermissionDenied as from etcd. refused, if set, is told
// the method of each refusal.
type ReadOnlyKV struct {
	next    pb.KVServer
	refused func(method string)
}

var _ pb.KVServer = ReadOnlyKV{}

// NewReadOnlyKV wraps next (grpcproxy's KV proxy).
func NewReadOnlyKV(next pb.KVServer, refused func(method string)) ReadOnlyKV {
	if refused == nil {
		refused = func(string) {}
	}
	return ReadOnlyKV{next: next, refused: refused}
}

// Range is forwarded.
func (k ReadOnlyKV) Range(ctx context.Context, r *pb.RangeRequest) (*pb.RangeResponse, error) {
	return k.next.Range(ctx, r)
}

// Put is refused.
func (k ReadOnlyKV) Put(context.Context, *pb.PutRequest) (*pb.PutResponse, error) {
	return nil, k.refuse("Put")
}

// DeleteRange is refused.
func (k ReadOnlyKV) DeleteRange(context.Context, *pb.DeleteRangeRequest) (*pb.DeleteRangeResponse, error) {
	return nil, k.refuse("DeleteRange")
}

// Compact is refused.
func (k ReadOnlyKV) Compact(context.Context, *pb.CompactionRequest) (*pb.CompactionResponse, error) {
	return nil, k.refuse("Compact")
}

// Txn is forwarded when neither branch holds a write, at any depth.
func (k ReadOnlyKV) Txn(ctx context.Context, r *pb.TxnRequest) (*pb.TxnResponse, error) {
	if !readOnlyTxn(r) {
		return nil, k.refuse("Txn")
	}
	return k.next.Txn(ctx, r)
}

func (k ReadOnlyKV) refuse(method string) error {
	k.refused(method)
	return rpctypes.ErrGRPCPermissionDenied
}

// readOnlyTxn reports whether every operation of both branches is a
// Range or a read-only nested Txn.
func readOnlyTxn(r *pb.TxnRequest) bool {
	return readOnlyOps(r.Success) && readOnlyOps(r.Failure)
}

func readOnlyOps(ops []*pb.RequestOp) bool {
	for _, op := range ops {
		switch req := op.Request.(type) {
		case *pb.RequestOp_RequestRange:
		case *pb.RequestOp_RequestTxn:
			if !readOnlyTxn(req.RequestTxn) {
				return false
			}
		default: // a put, a delete, or a kind this code does not know
			return false
		}
	}
	return true
}
