package etcdtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kubesky/kubesky/etcdstore"
)

// WatchErr opens a watch of [key, end) through c and returns the error
// etcd cancels it with (rpctypes.ErrPermissionDenied for a range the
// user may not read), or nil once etcd says it is created.
func WatchErr(ctx context.Context, c *clientv3.Client, key, end string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	w := c.Watch(clientv3.WithRequireLeader(ctx), key, clientv3.WithRange(end), clientv3.WithCreatedNotify())
	select {
	case resp, ok := <-w:
		if !ok {
			return errors.New("the watch closed without an answer")
		}
		return watchCancelErr(resp.Err())
	case <-ctx.Done():
		return fmt.Errorf("no answer to the watch: %w", ctx.Err())
	}
}

// WatchRangesErr opens, through c, a watch of prefix over each range an
// etcdstore.ListWatcher takes turns with after a stall (etcdstore.WatchEnds)
// and returns the first refusal, naming its range.
func WatchRangesErr(ctx context.Context, c *clientv3.Client, prefix string) error {
	for _, end := range etcdstore.WatchEnds(prefix) {
		if err := WatchErr(ctx, c, prefix, end); err != nil {
			return fmt.Errorf("watching [%q, %q): %w", prefix, end, err)
		}
	}
	return nil
}

// watchCancelErr is err, or rpctypes.ErrPermissionDenied if that is
// why etcd cancelled the watch: the reason comes back as text only.
func watchCancelErr(err error) error {
	if err != nil && strings.Contains(err.Error(), rpctypes.ErrPermissionDenied.Error()) {
		return rpctypes.ErrPermissionDenied
	}
	return err
}
