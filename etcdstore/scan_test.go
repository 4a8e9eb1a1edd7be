package etcdstore_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kubesky/kubesky/etcdstore"
	"github.com/kubesky/kubesky/etcdstore/etcdtest"
)

// limitRecorder is an etcd client that notes each Get's limit and revision.
type limitRecorder struct {
	kv        clientv3.KV
	limits    []int64
	revisions []int64
}

func (r *limitRecorder) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	op := clientv3.OpGet(key, opts...)
	r.limits = append(r.limits, op.Limit())
	r.revisions = append(r.revisions, op.Rev())
	return r.kv.Get(ctx, key, opts...)
}

func TestScanPagesGrowToAnEighthOfTheRange(t *testing.T) {
	srv := etcdtest.Start(t)
	for i := range 40 {
		srv.Put(t, fmt.Sprintf("/skydns/local/k%02d", i), "v")
	}
	for _, c := range []struct {
		pageSize   int64
		wantLimits []int64
	}{
		{pageSize: 2, wantLimits: []int64{2, 5, 5, 5, 5, 5, 5, 5, 5}}, // 38 keys after the first page: 5 per page, 8 pages
		{pageSize: 16, wantLimits: []int64{16, 16, 16}},               // already above 40/8
		{pageSize: 40, wantLimits: []int64{40}},
	} {
		t.Run(fmt.Sprint("page size ", c.pageSize), func(t *testing.T) {
			rec := &limitRecorder{kv: srv.Client}
			var keys []string
			header, err := etcdstore.Scan(context.Background(), rec, "/skydns/", c.pageSize, time.Second, func(kv *mvccpb.KeyValue) {
				keys = append(keys, string(kv.Key))
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(keys) != 40 || !slices.IsSorted(keys) || keys[0] != "/skydns/local/k00" {
				t.Fatalf("read %d keys %v, want the 40 in order", len(keys), keys)
			}
			if !slices.Equal(rec.limits, c.wantLimits) {
				t.Errorf("limits %v, want %v", rec.limits, c.wantLimits)
			}
			for _, rev := range rec.revisions[1:] {
				if rev != header.Revision {
					t.Errorf("a later page read at revision %d, the first at %d", rev, header.Revision)
				}
			}
		})
	}
}
