//go:build !unix

package fastpath

import (
	"errors"
	"net"
)

// reader is a stub: reading batches of packets needs a Unix system.
type reader struct{ conn *net.UDPConn }

func newReader(conn *net.UDPConn, _ *Cache, _ *Shard, _ *fallbackConn, _ bool, _ Config) (*reader, error) {
	return &reader{conn: conn}, nil
}

func (r *reader) run() error { return errors.New("the DNS fast path needs a Unix system") }

func (r *reader) addr() net.Addr { return r.conn.LocalAddr() }
