package fastpath

import (
	"net"
	"net/netip"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// fallbackQueue is how many queries may wait for the ordinary path; more
// are dropped, as a full socket buffer would drop them (and a client's
// beyond perSourceQueue, see fairQueue).
const fallbackQueue = 1024

// Addr is the address of a client whose query the ordinary path answers:
// its UDP address and, on a socket bound to an unspecified address, the
// control message that makes the reply leave from the address the query
// was sent to.
type Addr struct {
	net.UDPAddr
	oob []byte
}

// packet is one query passed on to the ordinary path.
type packet struct {
	data []byte
	addr *Addr
}

// fallbackConn is the net.PacketConn an ordinary miekg/dns server reads:
// ReadFrom returns the queries the fast path passes on, WriteTo sends the
// answers through the fast path's port. Closing it does not close the
// sockets, which the Server owns.
type fallbackConn struct {
	out     *net.UDPConn // any socket of the port sends from it
	queue   *fairQueue
	closed  chan struct{}
	once    sync.Once
	wake    chan struct{}  // a read deadline was set in the past
	dropped *atomic.Uint64 // counts the queries the queue had no room for

	deadline atomic.Int64 // read deadline, UnixNano; 0: none
}

func newFallbackConn(out *net.UDPConn, dropped *atomic.Uint64) *fallbackConn {
	return &fallbackConn{out: out, dropped: dropped, queue: newFairQueue(),
		closed: make(chan struct{}), wake: make(chan struct{}, 1)}
}

// pass queues a copy of a query for the ordinary path, with the reply
// control message built from the query's (rcv), if any.
func (c *fallbackConn) pass(data []byte, from *net.UDPAddr, rcv []byte) {
	// from is the reader's, reused for its next batch: copy it.
	p := packet{data: append([]byte(nil), data...), addr: &Addr{UDPAddr: net.UDPAddr{IP: slices.Clone(from.IP), Port: from.Port, Zone: from.Zone}}}
	if len(rcv) > 0 {
		p.addr.oob = replyControl(make([]byte, oobSize), rcv)
	}
	source, _ := netip.AddrFromSlice(from.IP)
	if !c.queue.push(source.Unmap(), p) {
		c.dropped.Add(1)
	}
}

// ReadFrom returns the next query passed on. A read deadline in the past
// (how a miekg/dns server interrupts its reads at shutdown) ends the wait;
// deadlines in the future are not enforced, the reader just waits longer.
func (c *fallbackConn) ReadFrom(b []byte) (int, net.Addr, error) {
	for {
		if d := c.deadline.Load(); d != 0 && time.Now().UnixNano() >= d {
			return 0, nil, os.ErrDeadlineExceeded
		}
		if p, ok := c.queue.pop(); ok {
			return copy(b, p.data), p.addr, nil
		}
		select {
		case <-c.queue.ready:
		case <-c.wake:
		case <-c.closed:
			return 0, nil, net.ErrClosed
		}
	}
}

// WriteTo sends an answer to addr, an address ReadFrom returned.
func (c *fallbackConn) WriteTo(b []byte, addr net.Addr) (int, error) {
	switch a := addr.(type) {
	case *Addr:
		if len(a.oob) > 0 {
			n, _, err := c.out.WriteMsgUDP(b, a.oob, &a.UDPAddr)
			return n, err
		}
		return c.out.WriteToUDP(b, &a.UDPAddr)
	case *net.UDPAddr:
		return c.out.WriteToUDP(b, a)
	}
	return 0, &net.OpError{Op: "write", Net: "udp", Addr: addr, Err: net.InvalidAddrError("not a UDP address")}
}

// Close ends pending and future reads.
func (c *fallbackConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return nil
}

// LocalAddr is the fast path's address.
func (c *fallbackConn) LocalAddr() net.Addr { return c.out.LocalAddr() }

// SetDeadline sets the read deadline; writes have none.
func (c *fallbackConn) SetDeadline(t time.Time) error { return c.SetReadDeadline(t) }

// SetReadDeadline sets the read deadline; one in the past interrupts a
// pending ReadFrom.
func (c *fallbackConn) SetReadDeadline(t time.Time) error {
	if t.IsZero() {
		c.deadline.Store(0)
		return nil
	}
	c.deadline.Store(t.UnixNano())
	if !t.After(time.Now()) {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
	return nil
}

// SetWriteDeadline does nothing: writes to UDP do not wait.
func (c *fallbackConn) SetWriteDeadline(time.Time) error { return nil }
