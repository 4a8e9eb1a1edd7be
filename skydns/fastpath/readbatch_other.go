//go:build unix && !linux

package fastpath

import (
	"net"

	"golang.org/x/net/ipv4"
)

// batchReader reads batches with ipv4.PacketConn.ReadBatch, which reads one
// packet per call where recvmmsg(2) is missing.
type batchReader struct{ conn *ipv4.PacketConn }

func newBatchReader(conn *net.UDPConn, _ int) (*batchReader, error) {
	return &batchReader{conn: ipv4.NewPacketConn(conn)}, nil
}

func (b *batchReader) read(ms []ipv4.Message) (int, error) { return b.conn.ReadBatch(ms, 0) }
