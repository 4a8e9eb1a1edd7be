package main

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// link is the path from the forwarders to the upstream: a UDP relay on
// 127.0.0.1 that holds each query for a settable delay before passing it
// on (the upstream's round trip), or drops every query while cut (the
// upstream outage). It runs in this process, on the load CPU.
type link struct {
	conn  *net.UDPConn
	to    *net.UDPAddr
	delay atomic.Int64 // nanoseconds
	cut   atomic.Bool
	wg    sync.WaitGroup
}

// linkTimeout is how long a relayed query waits for the upstream.
const linkTimeout = 3 * time.Second

func startLink(upstream string) (*link, error) {
	to, err := net.ResolveUDPAddr("udp", upstream)
	if err != nil {
		return nil, err
	}
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, err
	}
	l := &link{conn: conn, to: to}
	l.wg.Add(1)
	go l.serve()
	return l, nil
}

func (l *link) addr() string { return l.conn.LocalAddr().String() }

func (l *link) setDelay(d time.Duration) { l.delay.Store(int64(d)) }

func (l *link) serve() {
	defer l.wg.Done()
	buf := make([]byte, 65535)
	for {
		n, from, err := l.conn.ReadFromUDP(buf)
		if err != nil {
			return // closed
		}
		if l.cut.Load() {
			continue
		}
		query := append([]byte(nil), buf[:n]...)
		l.wg.Add(1)
		go l.relay(query, from, time.Duration(l.delay.Load()))
	}
}

// relay passes one query on after delay, from a socket of its own, and
// sends the reply back to the forwarder unless the link was cut since.
func (l *link) relay(query []byte, from *net.UDPAddr, delay time.Duration) {
	defer l.wg.Done()
	if delay > 0 {
		time.Sleep(delay) // the simulated round trip, not a wait for a condition
	}
	c, err := net.DialUDP("udp", nil, l.to)
	if err != nil {
		return
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(linkTimeout))
	if _, err := c.Write(query); err != nil {
		return
	}
	reply := make([]byte, 65535)
	n, err := c.Read(reply)
	if err != nil || l.cut.Load() {
		return
	}
	l.conn.WriteToUDP(reply[:n], from)
}

func (l *link) close() {
	l.conn.Close()
	l.wg.Wait()
}
