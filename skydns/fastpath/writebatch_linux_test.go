package fastpath

import (
	"fmt"
	"net"
	"testing"
	"time"

	"golang.org/x/net/ipv4"
)

func TestTheBatchWriterSendsEachAnswerToItsClientWithoutAllocating(t *testing.T) {
	onEachLoopback(t, func(t *testing.T, addr string, conn *net.UDPConn) {
		w, err := newBatchWriter(conn, 4)
		if err != nil {
			t.Fatal(err)
		}
		clients := make([]*net.UDPConn, 3)
		ms := make([]ipv4.Message, len(clients))
		for i := range clients {
			if clients[i], err = net.ListenUDP("udp", mustResolve(t, addr)); err != nil {
				t.Fatal(err)
			}
			defer clients[i].Close()
			ms[i] = ipv4.Message{Buffers: [][]byte{fmt.Appendf(nil, "answer %d", i)}, Addr: clients[i].LocalAddr()}
		}
		if n, err := w.write(ms); n != len(ms) || err != nil {
			t.Fatalf("write: %d, %v; want %d sent", n, err, len(ms))
		}
		for i, c := range clients {
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			buf := make([]byte, 64)
			n, from, err := c.ReadFromUDP(buf)
			if err != nil || string(buf[:n]) != fmt.Sprintf("answer %d", i) || from.Port != conn.LocalAddr().(*net.UDPAddr).Port {
				t.Fatalf("client %d got %q from %v, %v", i, buf[:n], from, err)
			}
		}
		if raceEnabled {
			t.Log("allocations not counted: the race detector allocates on its own")
			return
		}
		allocs := testing.AllocsPerRun(20, func() {
			if n, err := w.write(ms[:1]); n != 1 || err != nil {
				t.Fatalf("write: %d, %v", n, err)
			}
		})
		if allocs != 0 {
			t.Errorf("%v allocations per write, want none", allocs)
		}
	})
}

func TestTheBatchWriterSendsToAnIPv4ClientFromADualStackSocket(t *testing.T) {
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv6unspecified})
	if err != nil {
		t.Skipf("no dual-stack socket here: %v", err)
	}
	defer conn.Close()
	client, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	w, err := newBatchWriter(conn, 1)
	if err != nil {
		t.Fatal(err)
	}
	to := client.LocalAddr().(*net.UDPAddr)
	mapped := &net.UDPAddr{IP: to.IP.To16(), Port: to.Port} // as the reader sees it on an IPv6 socket
	if n, err := w.write([]ipv4.Message{{Buffers: [][]byte{[]byte("hello")}, Addr: mapped}}); n != 1 || err != nil {
		t.Fatalf("write: %d, %v", n, err)
	}
	client.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 16)
	if n, _, err := client.ReadFromUDP(buf); err != nil || string(buf[:n]) != "hello" {
		t.Fatalf("got %q, %v", buf[:n], err)
	}
}
