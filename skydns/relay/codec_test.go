package relay

import (
	"testing"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
)

func TestASharedFrameReadsAsItsWatchersResponse(t *testing.T) {
	body, err := (&pb.WatchResponse{Header: &pb.ResponseHeader{Revision: 9},
		Events: []*mvccpb.Event{{Kv: &mvccpb.KeyValue{Key: []byte("/skydns/a"), ModRevision: 9}}}}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	codec := newFrameCodec()
	for _, id := range []int64{0, 1, 300, -1} {
		wire, err := codec.Marshal(&sharedFrame{watchID: watchIDField(id), body: body})
		if err != nil {
			t.Fatal(err)
		}
		var got pb.WatchResponse
		if err := got.Unmarshal(wire.Materialize()); err != nil {
			t.Fatalf("watch %d: %v", id, err)
		}
		if got.WatchId != id || got.Header.Revision != 9 || len(got.Events) != 1 || string(got.Events[0].Kv.Key) != "/skydns/a" {
			t.Errorf("watch %d: read back %+v", id, &got)
		}
	}
}
