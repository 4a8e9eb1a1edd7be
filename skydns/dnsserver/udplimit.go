package dnsserver

import (
	"net"
	"time"

	"github.com/miekg/dns"
)

// DefaultUDPMaxInFlight bounds the UDP queries the ordinary path holds at
// once (Config.UDPMaxInFlight).
const DefaultUDPMaxInFlight = 1000

// udpSlots bound the UDP packets between their read and the end of their
// handling. miekg/dns starts a goroutine per packet as fast as it reads;
// without a bound, a server short of CPU, or forwarding to an upstream
// that does not answer, piles up goroutines and memory. With it, the
// reader waits for a slot, and what it does not read waits in the socket
// (or the fast path's queue) and is dropped there when that is full.
//
// A slot is taken before each read and given back exactly once per packet,
// where miekg/dns's handling of it ends: a failed read, a packet that does
// not parse (MsgInvalidFunc), one the accept function does not accept
// (ignored or answered FORMERR or NOTIMP at once), or the end of the
// handler.
type udpSlots chan struct{}

func (s udpSlots) take() { s <- struct{}{} }
func (s udpSlots) give() { <-s }

// limit makes d, a UDP server, read only while a slot is free.
func (s udpSlots) limit(d *dns.Server) {
	d.DecorateReader = func(r dns.Reader) dns.Reader { return slotReader{PacketConnReader: r.(dns.PacketConnReader), slots: s} }
	invalid := d.MsgInvalidFunc
	d.MsgInvalidFunc = func(m []byte, err error) {
		s.give()
		invalid(m, err)
	}
	d.MsgAcceptFunc = func(h dns.Header) dns.MsgAcceptAction {
		action := accept(h)
		if action != dns.MsgAccept {
			s.give()
		}
		return action
	}
}

// slotReader takes a slot before each read.
type slotReader struct {
	dns.PacketConnReader
	slots udpSlots
}

func (r slotReader) ReadUDP(conn *net.UDPConn, timeout time.Duration) ([]byte, *dns.SessionUDP, error) {
	r.slots.take()
	m, s, err := r.PacketConnReader.ReadUDP(conn, timeout)
	if err != nil {
		r.slots.give()
	}
	return m, s, err
}

func (r slotReader) ReadPacketConn(conn net.PacketConn, timeout time.Duration) ([]byte, net.Addr, error) {
	r.slots.take()
	m, a, err := r.PacketConnReader.ReadPacketConn(conn, timeout)
	if err != nil {
		r.slots.give()
	}
	return m, a, err
}
