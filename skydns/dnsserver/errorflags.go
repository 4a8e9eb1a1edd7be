package dnsserver

import (
	"net/netip"

	"github.com/miekg/dns"
)

// Header flag bits, in the 16 bits after the ID.
const (
	flagTC = 1 << 9
	flagRA = 1 << 7
	flagZ  = 1 << 6
	flagAD = 1 << 5
)

// errorAnswer reports whether msg, a packed answer, is an error that says
// nothing of the question's data: FORMERR or NOTIMP.
func errorAnswer(msg []byte) bool {
	if len(msg) < 12 {
		return false
	}
	rcode := int(msg[3] & 0xF)
	return rcode == dns.RcodeFormatError || rcode == dns.RcodeNotImplemented
}

// errorFlags returns msg, a packed error answer, with the flags it
// may carry: no TC (the answer is complete), no AD (nothing was
// authenticated), no Z, and RA only when recursion is available to the
// client. miekg/dns's server builds the answers to what the accept
// function rejects, or to what does not parse, from the query's header,
// flags included; every answer of the ordinary paths passes here. msg is
// returned as is unless a flag changes, then a copy is.
func errorFlags(msg []byte, recursion bool) []byte {
	bits := uint16(msg[2])<<8 | uint16(msg[3])
	want := bits &^ (flagTC | flagRA | flagZ | flagAD)
	if recursion {
		want |= flagRA
	}
	if want == bits {
		return msg
	}
	out := append([]byte(nil), msg...)
	out[2], out[3] = byte(want>>8), byte(want)
	return out
}

// recursionFor is Config.RecursionAvailable, never nil.
func recursionFor(available func(netip.Addr) bool) func(netip.Addr) bool {
	if available == nil {
		return func(netip.Addr) bool { return false }
	}
	return available
}

// flagWriter is the writer of an ordinary UDP server's answers: it passes
// each through errorFlags for the client it goes to.
type flagWriter struct {
	dns.Writer
	client    netip.Addr
	recursion func(netip.Addr) bool
}

func (w flagWriter) Write(msg []byte) (int, error) {
	if errorAnswer(msg) {
		msg = errorFlags(msg, w.recursion(w.client))
	}
	return w.Writer.Write(msg)
}

// decorateFlags makes d's answers pass through errorFlags.

func (h *handler) decorateFlags(d *dns.Server) {
	d.DecorateWriter = func(w dns.Writer) dns.Writer {
		var client netip.Addr
		if rw, ok := w.(dns.ResponseWriter); ok {
			client = clientAddr(rw)
		}
		return flagWriter{Writer: w, client: client, recursion: h.recursion}
	}
}
