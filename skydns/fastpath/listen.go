package fastpath

import (
	"context"
	"fmt"
	"net"
)

// ReceiveBuffer is the receive buffer each UDP socket asks for (the
// kernel caps it at net.core.rmem_max): room for thousands of queries, so
// that a moment without CPU delays queries rather than drops them.
const ReceiveBuffer = 4 << 20

// ListenUDP binds n UDP sockets to addr (host:port; port 0 picks one free
// port for all), sharing the port with SO_REUSEPORT when n > 1: the kernel
// spreads queries over them by their source address and port. Each asks
// for a ReceiveBuffer.
func ListenUDP(addr string, n int) ([]*net.UDPConn, error) {
	return listenUDP(addr, n, n > 1)
}

// ListenUDPShared is ListenUDP with SO_REUSEPORT set even on a single
// socket, so that other processes of the same user may join the port
// (node-local mode: two skydns share one address).
func ListenUDPShared(addr string, n int) ([]*net.UDPConn, error) {
	return listenUDP(addr, n, true)
}

func listenUDP(addr string, n int, shared bool) ([]*net.UDPConn, error) {
	if n < 1 {
		return nil, fmt.Errorf("%d UDP sockets: want at least 1", n)
	}
	lc := net.ListenConfig{}
	if shared {
		lc.Control = ReusePort
	}
	var conns []*net.UDPConn
	for range n {
		pc, err := lc.ListenPacket(context.Background(), "udp", addr)
		if err != nil {
			closeAll(conns)
			return nil, fmt.Errorf("listening on udp %s: %w", addr, err)
		}
		conn := pc.(*net.UDPConn)
		conn.SetReadBuffer(ReceiveBuffer) // best effort: a smaller buffer drops more under load, nothing else
		conns = append(conns, conn)
		addr = pc.LocalAddr().String() // the others take the same port
	}
	return conns, nil
}

func closeAll(conns []*net.UDPConn) {
	for _, c := range conns {
		c.Close()
	}
}
