//go:build unix && !linux

package fastpath

import (
	"net"

	"golang.org/x/net/ipv4"
)

// batchWriter writes batches with ipv4.PacketConn.WriteBatch, which writes
// one packet per call where sendmmsg(2) is missing.
type batchWriter struct{ conn *ipv4.PacketConn }

func newBatchWriter(conn *net.UDPConn, _ int) (*batchWriter, error) {
	return &batchWriter{conn: ipv4.NewPacketConn(conn)}, nil
}

func (w *batchWriter) write(ms []ipv4.Message) (int, error) { return w.conn.WriteBatch(ms, 0) }
