package main

import (
	"context"
	"net"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// storm has stormClients clients, each from a socket of its own, ask
// inst the external zone's name i (never asked before) at once, and counts
// the upstream queries that cost and the answers that came.
func (b *bench) storm(ctx context.Context, inst *instance, row *forwardRow, i int) {
	before, err := b.up.received(ctx)
	if err != nil {
		row.Problem = "storm: " + err.Error()
		return
	}
	q := new(dns.Msg).SetQuestion(externalName(i), dns.TypeA)
	wire, _ := q.Pack()
	conns := make([]net.Conn, 0, stormClients)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range stormClients {
		c, err := net.Dial("udp", inst.addr)
		if err != nil {
			row.Problem = "storm: " + err.Error()
			return
		}
		conns = append(conns, c)
	}
	row.StormAnswered = askAtOnce(conns, wire)
	after, err := b.up.received(ctx)
	if err != nil {
		row.Problem = "storm: " + err.Error()
		return
	}
	row.StormUpstream = after - before
	b.logf("%-18s storm of %d clients for one new name: %d answered, %d upstream queries", inst.name, stormClients, row.StormAnswered, row.StormUpstream)
}

// askAtOnce sends wire on every connection, all released together, and
// returns how many got an answer within 5 s.
func askAtOnce(conns []net.Conn, wire []byte) int {
	var (
		ready, done sync.WaitGroup
		mu          sync.Mutex
		answered    int
	)
	start := make(chan struct{})
	for _, c := range conns {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			buf := make([]byte, dns.MaxMsgSize)
			ready.Done()
			<-start
			c.SetDeadline(time.Now().Add(5 * time.Second))
			if _, err := c.Write(wire); err != nil {
				return
			}
			if n, err := c.Read(buf); err == nil && n >= 12 {
				mu.Lock()
				answered++
				mu.Unlock()
			}
		}()
	}
	ready.Wait()
	close(start)
	done.Wait()
	return answered
}
