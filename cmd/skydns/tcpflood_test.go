package main

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/skydns/captures"
)

// tcpResult is what the TCP senders sent.
type tcpResult struct{ frames, conns int }

// sendTCPFrames opens sessionsPerSecond connections a second, at most 8 at
// a time, until ctx ends; each carries a few frames: real queries, mutated
// ones, zero-length ones, oversized garbage, and a last one whose length
// lies (longer than what follows) or is cut. The client then closes at
// once, half-closes and reads what comes, or resets.
func sendTCPFrames(ctx context.Context, addr string, sessionsPerSecond int) tcpResult {
	var mu sync.Mutex
	var total tcpResult
	var wg sync.WaitGroup
	sessions := make(chan struct{}, 8)
	tick := time.NewTicker(time.Second / time.Duration(sessionsPerSecond))
	defer tick.Stop()
	seeds := append(captures.Clients(), captures.Hostile()...)
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			wg.Wait()
			return total
		case <-tick.C:
		}
		sessions <- struct{}{}
		wg.Go(func() {
			frames := tcpSession(addr, rand.New(rand.NewPCG(uint64(i), 7)), seeds)
			<-sessions
			mu.Lock()
			total.frames += frames
			total.conns++
			mu.Unlock()
		})
	}
}

// tcpSession is one connection of sendTCPFrames; it returns the frames
// written.
func tcpSession(addr string, rng *rand.Rand, seeds [][]byte) int {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return 0
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(3 * time.Second))
	var stream []byte
	frames := 1 + rng.IntN(16)
	for range frames - 1 {
		switch rng.IntN(20) {
		case 0:
			stream = append(stream, 0, 0)
		case 1:
			stream = append(stream, captures.TCPFrame(randomBytes(rng, 60000+rng.IntN(5000)))...)
		case 2, 3, 4, 5, 6, 7:
			stream = append(stream, captures.TCPFrame(seeds[rng.IntN(len(seeds))])...)
		default:
			stream = append(stream, captures.TCPFrame(mutate(rng, seeds[rng.IntN(len(seeds))]))...)
		}
	}
	last := captures.TCPFrame(mutate(rng, seeds[rng.IntN(len(seeds))]))
	if rng.IntN(2) == 0 {
		binary.BigEndian.PutUint16(last, uint16(len(last)+rng.IntN(1000))) // longer than what follows
	} else {
		last = last[:rng.IntN(len(last))]
	}
	stream = append(stream, last...)
	conn.Write(stream)
	switch rng.IntN(3) {
	case 0:
		conn.(*net.TCPConn).CloseWrite()
		io.Copy(io.Discard, conn)
	case 1:
		conn.(*net.TCPConn).SetLinger(0) // a reset, not a close
	}
	return frames
}

// idleResult is how the server treated connections that send nothing.
type idleResult struct {
	opened  int
	refused int // reset at once: beyond the limit
	closed  int // closed by the server after waiting for a query
	open    int // still open after 20 s
}

// holdIdleConnections opens n TCP connections, perSecond a second, and
// keeps each open, sending nothing, until the server closes it or 20 s
// pass.
func holdIdleConnections(t *testing.T, addr string, n, perSecond int) idleResult {
	var mu sync.Mutex
	var r idleResult
	count := func(field *int) { mu.Lock(); *field++; mu.Unlock() }
	tick := time.NewTicker(time.Second / time.Duration(perSecond))
	defer tick.Stop()
	var wg sync.WaitGroup
	for range n {
		<-tick.C
		wg.Go(func() {
			conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
			count(&r.opened)
			if errors.Is(err, syscall.ECONNRESET) { // reset before connect returned
				count(&r.refused)
				return
			}
			if err != nil {
				t.Errorf("opening an idle connection: %v", err)
				return
			}
			defer conn.Close()
			conn.SetReadDeadline(time.Now().Add(20 * time.Second))
			_, err = conn.Read(make([]byte, 1))
			switch {
			case errors.Is(err, syscall.ECONNRESET):
				count(&r.refused)
			case errors.Is(err, io.EOF):
				count(&r.closed)
			default:
				count(&r.open)
			}
		})
	}
	wg.Wait()
	return r
}

// stopReading opens n connections that ask for a large answer 10 000
// times and never read, with a 4 kB receive buffer: the server's writes
// block until its write timeout closes them. The connections stay open
// on this side until the test ends.
func stopReading(t *testing.T, addr string, n int) {
	query := new(dns.Msg).SetQuestion("big.default.svc.cluster.local.", dns.TypeA)
	wire, err := query.Pack()
	if err != nil {
		t.Fatal(err)
	}
	var stream []byte
	for range 10_000 {
		stream = append(stream, captures.TCPFrame(wire)...)
	}
	dialer := net.Dialer{Timeout: 5 * time.Second, Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	for range n {
		conn, err := dialer.Dial("tcp", addr)
		if errors.Is(err, syscall.ECONNRESET) {
			continue // beyond the limit
		}
		if err != nil {
			t.Errorf("opening a connection that never reads: %v", err)
			return
		}
		t.Cleanup(func() { conn.Close() })
		conn.SetWriteDeadline(time.Now().Add(20 * time.Second))
		conn.Write(stream) // an error is the server's close
	}
}
