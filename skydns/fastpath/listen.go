package fastpath

import (
	"context"
	"fmt"
	"net"
)

// ListenUDP binds n UDP sockets to addr (host:port; port 0 picks one free
// port for all), sharing the port with SO_REUSEPORT when n > 1: the kernel
// spreads queries over them by their source address and port.
func ListenUDP(addr string, n int) ([]*net.UDPConn, error) {
	if n < 1 {
		return nil, fmt.Errorf("%d UDP sockets: want at least 1", n)
	}
	lc := net.ListenConfig{}
	if n > 1 {
		lc.Control = reusePort
	}
	var conns []*net.UDPConn
	for range n {
		pc, err := lc.ListenPacket(context.Background(), "udp", addr)
		if err != nil {
			closeAll(conns)
			return nil, fmt.Errorf("listening on udp %s: %w", addr, err)
		}
		conns = append(conns, pc.(*net.UDPConn))
		addr = pc.LocalAddr().String() // the others take the same port
	}
	return conns, nil
}

func closeAll(conns []*net.UDPConn) {
	for _, c := range conns {
		c.Close()
	}
}
