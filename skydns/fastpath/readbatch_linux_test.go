package fastpath

import (
	"fmt"
	"net"
	"testing"
	"time"

	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"
)

// readAll reads from r until want packets have arrived or 5 s pass.
func readAll(t *testing.T, r *batchReader, conn *net.UDPConn, ms []ipv4.Message, want int) []ipv4.Message {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	var got []ipv4.Message
	for len(got) < want {
		n, err := r.read(ms)
		if err != nil {
			t.Fatalf("read after %d packets: %v", len(got), err)
		}
		for _, m := range ms[:n] {
			m.Addr = &net.UDPAddr{IP: append(net.IP(nil), m.Addr.(*net.UDPAddr).IP...), Port: m.Addr.(*net.UDPAddr).Port}
			m.Buffers = [][]byte{append([]byte(nil), m.Buffers[0][:m.N]...)}
			got = append(got, m)
		}
	}
	return got
}

// onEachLoopback runs test as a subtest with a UDP socket on 127.0.0.1
// and one on ::1 (skipped, saying why, where there is none).
func onEachLoopback(t *testing.T, test func(t *testing.T, network string, conn *net.UDPConn)) {
	for _, network := range []struct{ name, addr string }{{"IPv4", "127.0.0.1:0"}, {"IPv6", "[::1]:0"}} {
		t.Run(network.name, func(t *testing.T) {
			conn, err := net.ListenUDP("udp", mustResolve(t, network.addr))
			if err != nil {
				t.Skipf("no %s loopback here: %v", network.name, err)
			}
			defer conn.Close()
			test(t, network.addr, conn)
		})
	}
}

func TestTheBatchReaderReadsSendersAndSizesWithoutAllocating(t *testing.T) {
	onEachLoopback(t, func(t *testing.T, _ string, conn *net.UDPConn) {
		r, err := newBatchReader(conn, 4)
		if err != nil {
			t.Fatal(err)
		}
		ms := make([]ipv4.Message, 4)
		for i := range ms {
			ms[i].Buffers = [][]byte{make([]byte, 8)}
		}
		client, err := net.DialUDP("udp", nil, conn.LocalAddr().(*net.UDPAddr))
		if err != nil {
			t.Fatal(err)
		}
		defer client.Close()
		for i := range 6 { // more than one batch; the last is longer than a buffer
			fmt.Fprintf(client, "q%d", i)
		}
		client.Write([]byte("0123456789"))
		got := readAll(t, r, conn, ms, 7)
		from := client.LocalAddr().(*net.UDPAddr)
		for i, m := range got {
			addr := m.Addr.(*net.UDPAddr)
			if !addr.IP.Equal(from.IP) || addr.Port != from.Port {
				t.Fatalf("packet %d from %v, want %v", i, addr, from)
			}
			if i < 6 && (string(m.Buffers[0]) != fmt.Sprintf("q%d", i) || m.Flags&unix.MSG_TRUNC != 0) {
				t.Fatalf("packet %d: %q flags %#x, want q%d", i, m.Buffers[0], m.Flags, i)
			}
		}
		if last := got[6]; last.N != 8 || last.Flags&unix.MSG_TRUNC == 0 {
			t.Errorf("a 10-byte packet into 8 bytes: N %d, flags %#x; want 8 and MSG_TRUNC", last.N, last.Flags)
		}
		if raceEnabled {
			t.Log("allocations not counted: the race detector allocates on its own")
			return
		}
		allocs := testing.AllocsPerRun(20, func() {
			client.Write([]byte("q"))
			if n, err := r.read(ms); err != nil || n != 1 {
				t.Fatalf("read: %d, %v", n, err)
			}
		})
		if allocs != 0 {
			t.Errorf("%v allocations per read, want none", allocs)
		}
	})
}

func mustResolve(t *testing.T, addr string) *net.UDPAddr {
	t.Helper()
	a, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
