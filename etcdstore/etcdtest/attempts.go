package etcdtest

import (
	"context"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Attempt is one try, through a client, at something a reader's
// credential must not be able to do.
type Attempt struct {
	Name string
	Do   func(context.Context, *clientv3.Client) error
}

// evil is the value the write attempts try to store.
const evil = `{"host":"192.0.2.66"}`

// Writes are the ways to change the record at key (or anything else):
// a Put, one outside /skydns/, Deletes, Txns writing in either branch or
// in a nested Txn, and a Compact.
func Writes(key string) []Attempt {
	return []Attempt{
		{"Put", func(ctx context.Context, c *clientv3.Client) error { _, err := c.Put(ctx, key, evil); return err }},
		{"Put outside /skydns/", func(ctx context.Context, c *clientv3.Client) error {
			_, err := c.Put(ctx, "/other/key", evil)
			return err
		}},
		{"Delete", func(ctx context.Context, c *clientv3.Client) error { _, err := c.Delete(ctx, key); return err }},
		{"Delete the prefix", func(ctx context.Context, c *clientv3.Client) error {
			_, err := c.Delete(ctx, "/skydns/", clientv3.WithPrefix())
			return err
		}},
		{"Txn with a put", func(ctx context.Context, c *clientv3.Client) error {
			_, err := c.Txn(ctx).Then(clientv3.OpGet(key), clientv3.OpPut(key, evil)).Commit()
			return err
		}},
		{"Txn with a delete in Else", func(ctx context.Context, c *clientv3.Client) error {
			_, err := c.Txn(ctx).If(clientv3.Compare(clientv3.Version(key), "=", 0)).Else(clientv3.OpDelete(key)).Commit()
			return err
		}},
		{"Txn with a put in a nested Txn", func(ctx context.Context, c *clientv3.Client) error {
			_, err := c.Txn(ctx).Then(clientv3.OpTxn(nil, []clientv3.Op{clientv3.OpPut(key, evil)}, nil)).Commit()
			return err
		}},
		{"Compact", func(ctx context.Context, c *clientv3.Client) error { _, err := c.Compact(ctx, 2); return err }},
	}
}

// Administration are calls of etcd's Lease, Cluster, Maintenance and
// Auth services.
func Administration() []Attempt {
	readwrite := clientv3.PermissionType(clientv3.PermReadWrite)
	return []Attempt{
		{"lease grant", func(ctx context.Context, c *clientv3.Client) error { _, err := c.Grant(ctx, 60); return err }},
		{"lease keep-alive", keepAlive},
		{"member add", func(ctx context.Context, c *clientv3.Client) error {
			_, err := c.MemberAdd(ctx, []string{"https://192.0.2.1:2380"})
			return err
		}},
		{"member remove", func(ctx context.Context, c *clientv3.Client) error { _, err := c.MemberRemove(ctx, 1); return err }},
		{"defragment", func(ctx context.Context, c *clientv3.Client) error {
			_, err := c.Defragment(ctx, c.Endpoints()[0])
			return err
		}},
		{"user add", func(ctx context.Context, c *clientv3.Client) error { _, err := c.UserAdd(ctx, "evil", "x"); return err }},
		{"role grant", func(ctx context.Context, c *clientv3.Client) error {
			_, err := c.RoleGrantPermission(ctx, "relay", "/", "\x00", readwrite)
			return err
		}},
		{"auth disable", func(ctx context.Context, c *clientv3.Client) error { _, err := c.AuthDisable(ctx); return err }},
	}
}

// keepAlive sends one LeaseKeepAlive on a stream of its own, so that the
// service's own error comes back (clientv3's keep-alive loop hides it).
func keepAlive(ctx context.Context, c *clientv3.Client) error {
	stream, err := pb.NewLeaseClient(c.ActiveConnection()).LeaseKeepAlive(ctx)
	if err == nil {
		_ = stream.Send(&pb.LeaseKeepAliveRequest{ID: 1})
		_, err = stream.Recv()
	}
	return err
}
