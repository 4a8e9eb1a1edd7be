package relay

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/kubesky/kubesky/etcdstore/etcdtest"
)

// TestAWatcherLeftBehindTheKeptBatchesCatchesUpFromEtcd stops reading one
// watch while 200 revisions of 2 kB each go by: its sends block once
// gRPC's flow-control window is full, the hub keeps none of the batches
// it missed, and when it reads again it gets every revision, in order,
// from an upstream watch of its own; a cancel request then ends it.
func TestAWatcherLeftBehindTheKeptBatchesCatchesUpFromEtcd(t *testing.T) {
	etcd := etcdtest.Start(t)
	bw := NewBatchingWatch(t.Context(), etcd.Client, 20*time.Millisecond)
	bw.retain = 1 // only the last batch
	srv := grpc.NewServer(grpc.ForceServerCodecV2(newFrameCodec()))
	pb.RegisterWatchServer(srv, bw)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	stream, err := pb.NewWatchClient(conn).Watch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	from := etcd.Put(t, "/skydns/a", "start") + 1
	create := &pb.WatchCreateRequest{Key: []byte("/skydns/"), RangeEnd: []byte(clientv3.GetPrefixRangeEnd("/skydns/")), StartRevision: from}
	if err := stream.Send(&pb.WatchRequest{RequestUnion: &pb.WatchRequest_CreateRequest{CreateRequest: create}}); err != nil {
		t.Fatal(err)
	}
	if resp, err := stream.Recv(); err != nil || !resp.Created {
		t.Fatalf("created: %+v, %v", resp, err)
	}
	var last int64
	for i := range 200 {
		last = etcd.Put(t, fmt.Sprintf("/skydns/k%d", i%10), strings.Repeat("x", 2048))
	}
	next := from
	deadline := time.After(30 * time.Second)
	for next <= last {
		select {
		case <-deadline:
			t.Fatalf("at revision %d of %d", next, last)
		default:
		}
		resp, err := stream.Recv()
		if err != nil {
			t.Fatalf("at revision %d: %v", next, err)
		}
		for _, ev := range resp.Events {
			if ev.Kv.ModRevision != next {
				t.Fatalf("revision %d where %d was next", ev.Kv.ModRevision, next)
			}
			next++
		}
	}
	if err := stream.Send(&pb.WatchRequest{RequestUnion: &pb.WatchRequest_CancelRequest{CancelRequest: &pb.WatchCancelRequest{WatchId: 0}}}); err != nil {
		t.Fatal(err)
	}
	for {
		resp, err := stream.Recv()
		if err != nil {
			t.Fatalf("waiting for the cancellation: %v", err)
		}
		if resp.Canceled {
			return
		}
	}
}
