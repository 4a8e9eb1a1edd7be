package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/ipv4"

	"github.com/kubesky/kubesky/internal/polltest"
	"github.com/kubesky/kubesky/skydns/captures"
)

// withID is a copy of query with its ID set to id.
func withID(query []byte, id uint16) []byte {
	q := append([]byte(nil), query...)
	binary.BigEndian.PutUint16(q, id)
	return q
}

// dialUDP is a connected UDP socket to addr.
func dialUDP(t *testing.T, addr string) *net.UDPConn {
	t.Helper()
	conn, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return conn.(*net.UDPConn)
}

// measureCapacity is how many datagrams of the flood the server takes
// in per second: what it does not drop (kernel or fast path) when sent
// blast datagrams as fast as this test can send them. It then waits until
// the server answers a query within 20 ms again.
func measureCapacity(t *testing.T, srv *hostileTarget, pool [][]byte, blast int) int {
	dropped := func() int {
		return udpDrops(t, srv.dns) + int(scrapeSum(t, srv.http, "skydns_dns_fast_path_dropped_total"))
	}
	before := dropped()
	r := sendFlood(t, srv.dns, pool, blast, 1<<30)
	taken := r.sent - (dropped() - before)
	polltest.Every(t, 20*time.Second, 100*time.Millisecond, "the server fast again after the capacity's measure", func() error {
		took, err := askOnce(srv.dns, captures.Clients()[0])
		if err == nil && took >= 20*time.Millisecond {
			err = fmt.Errorf("answered in %v", took)
		}
		return err
	})
	return int(float64(taken) / r.took.Seconds())
}

// floodResult is what the flood sent and how much of it was answered.
type floodResult struct {
	sent, answered int
	took           time.Duration
}

// floodPool is n datagrams: four in five mutations of real and hostile
// queries, the rest random bytes.
func floodPool(n int) [][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	seeds := append(captures.Clients(), captures.Hostile()...)
	pool := make([][]byte, n)
	for i := range pool {
		if rng.IntN(5) == 0 {
			pool[i] = randomBytes(rng, rng.IntN(600))
			continue
		}
		pool[i] = mutate(rng, seeds[rng.IntN(len(seeds))])
	}
	return pool
}

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// mutate applies one to four random changes to a copy of seed: a flipped
// bit, a random byte, a cut, random bytes appended, a part repeated, a
// random header count.
func mutate(rng *rand.Rand, seed []byte) []byte {
	b := append([]byte(nil), seed...)
	for range 1 + rng.IntN(4) {
		if len(b) == 0 {
			b = randomBytes(rng, 12)
		}
		switch at := rng.IntN(len(b)); rng.IntN(6) {
		case 0:
			b[at] ^= 1 << rng.IntN(8)
		case 1:
			b[at] = byte(rng.Uint32())
		case 2:
			b = b[:at]
		case 3:
			b = append(b, randomBytes(rng, 1+rng.IntN(64))...)
		case 4:
			b = append(b, b[at:]...)
		default:
			if len(b) >= 12 {
				binary.BigEndian.PutUint16(b[4+2*rng.IntN(4):], uint16(rng.IntN(4)))
			}
		}
	}
	return b
}

// sendFlood sends total datagrams from the pool from 4 sockets, in
// batches, rate a second, and counts the answers.
func sendFlood(t *testing.T, addr string, pool [][]byte, total, rate int) floodResult {
	const sockets, batch = 4, 64
	var answered atomic.Int64
	var conns []*ipv4.PacketConn
	var readers sync.WaitGroup
	for range sockets {
		conn := dialUDP(t, addr)
		conn.SetReadBuffer(4 << 20)
		conns = append(conns, ipv4.NewPacketConn(conn))
		readers.Go(func() { drain(conn, &answered) })
	}
	msgs := make([]ipv4.Message, batch)
	start := time.Now()
	sent := 0
	for sent < total {
		due := min(total, int(time.Since(start).Seconds()*float64(rate))+batch)
		for ; sent+batch <= due; sent += batch {
			for i := range msgs {
				msgs[i] = ipv4.Message{Buffers: [][]byte{pool[(sent+i)%len(pool)]}}
			}
			if _, err := conns[sent/batch%sockets].WriteBatch(msgs, 0); err != nil {
				t.Errorf("sending the flood: %v", err)
				return floodResult{sent: sent}
			}
		}
		time.Sleep(time.Millisecond) // the pace
	}
	took := time.Since(start)
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(time.Second)) // answers still on their way
	}
	readers.Wait()
	return floodResult{sent: sent, answered: int(answered.Load()), took: took}
}

// drain counts what arrives on conn until it is closed or quiet past its
// read deadline.
func drain(conn *net.UDPConn, answered *atomic.Int64) {
	defer conn.Close()
	pc := ipv4.NewPacketConn(conn)
	msgs := make([]ipv4.Message, 64)
	for i := range msgs {
		msgs[i].Buffers = [][]byte{make([]byte, 4096)}
	}
	for {
		n, err := pc.ReadBatch(msgs, 0)
		if err != nil {
			return
		}
		answered.Add(int64(n))
	}
}

// goodResult is how the well-behaved client fared.
type goodResult struct {
	sent, answered int
	slowest        time.Duration
	failures       []string // the first few
}

// askWhileFlooded asks the real clients' queries, one every 10 ms from a
// fresh socket each on goodClientIP, until ctx ends; a query is answered when a response
// with its ID comes within 1 s and is not SERVFAIL.
func askWhileFlooded(ctx context.Context, addr string) goodResult {
	queries := captures.Clients()
	var r goodResult
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	start := time.Now()
	for id := 0; ctx.Err() == nil; id++ {
		q := withID(queries[id%len(queries)], uint16(id))
		took, err := askOnce(addr, q)
		r.sent++
		if err != nil {
			if len(r.failures) < 5 {
				r.failures = append(r.failures, fmt.Sprintf("%v into the flood, %x: %v", time.Since(start).Round(time.Millisecond), q, err))
			}
		} else {
			r.answered++
			r.slowest = max(r.slowest, took)
		}
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
	return r
}

// goodClientIP is the well-behaved client's source address: another
// loopback address than the flood's 127.0.0.1, as another pod's IP is
// another in a cluster.
var goodClientIP = net.IPv4(127, 0, 0, 2)

func askOnce(addr string, query []byte) (time.Duration, error) {
	start := time.Now()
	server, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return 0, err
	}
	conn, err := net.DialUDP("udp", &net.UDPAddr{IP: goodClientIP}, server)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	conn.SetDeadline(start.Add(time.Second))
	if _, err := conn.Write(query); err != nil {
		return 0, err
	}
	buf := make([]byte, 4096)
	for {
		n, err := conn.Read(buf)
		if err != nil {
			return 0, err
		}
		if n >= 4 && binary.BigEndian.Uint16(buf) == binary.BigEndian.Uint16(query) {
			if rcode := buf[3] & 0xf; rcode == 2 {
				return 0, fmt.Errorf("SERVFAIL")
			}
			return time.Since(start), nil
		}
	}
}
