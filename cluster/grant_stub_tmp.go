package cluster

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"
)

var kcsGrantStub = func(ctx context.Context, c *clientv3.Client, prefix string, ids []string, enable bool) error { return nil }
