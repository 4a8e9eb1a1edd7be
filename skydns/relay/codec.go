package relay

import (
	"google.golang.org/grpc/encoding"
	_ "google.golang.org/grpc/encoding/proto" // registers "proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
)

// frameCodec is gRPC's proto codec, except that a *sharedFrame goes out
// as the bytes it holds: a batch of watch events is marshalled once and
// the same bytes written to every watcher.
type frameCodec struct{ proto encoding.CodecV2 }

func newFrameCodec() frameCodec { return frameCodec{proto: encoding.GetCodecV2("proto")} }

func (c frameCodec) Marshal(v any) (mem.BufferSlice, error) {
	if f, ok := v.(*sharedFrame); ok {
		return mem.BufferSlice{mem.SliceBuffer(f.watchID), mem.SliceBuffer(f.body)}, nil
	}
	return c.proto.Marshal(v)
}

func (c frameCodec) Unmarshal(data mem.BufferSlice, v any) error { return c.proto.Unmarshal(data, v) }

func (frameCodec) Name() string { return "proto" }

// sharedFrame is a WatchResponse on the wire: body is a response without
// a watch ID (the same for every watcher), watchID the field that names
// one watcher's watch. Protobuf reads fields in any order.
type sharedFrame struct{ watchID, body []byte }

// watchIDField is the WatchResponse's watch_id field (number 2) holding
// id; proto3 leaves out a zero.
func watchIDField(id int64) []byte {
	if id == 0 {
		return nil
	}
	return protowire.AppendVarint(protowire.AppendTag(nil, 2, protowire.VarintType), uint64(id))
}
