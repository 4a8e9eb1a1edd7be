package forward

import (
	"net/netip"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/skydns/tap"
)

// SetTap makes the forwarder tell t of every exchange with an upstream
// (FORWARDER_QUERY and FORWARDER_RESPONSE). Call it before the first
// query.
func (f *Forwarder) SetTap(t *tap.Tap) { f.tap = t }

// tapExchange tells the tap of q, sent to addr at start, and r, its reply
// (nil: none came).
func (f *Forwarder) tapExchange(addr string, tr tap.Transport, q, r *dns.Msg, start time.Time) {
	if f.tap == nil {
		return
	}
	upstream, _ := netip.ParseAddrPort(addr)
	query, _ := q.Pack()
	var resp []byte
	if r != nil {
		resp, _ = r.Pack()
	}
	f.tap.Forwarder(upstream, tr, query, resp, start, time.Now())
}
