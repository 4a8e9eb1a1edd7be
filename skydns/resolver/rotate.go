package resolver

import (
	"slices"
	"strings"

	"github.com/miekg/dns"
)

// Rotate turns the RRsets of resp's answer section that clients pick from
// by order, as SkyDNS's round-robin and CoreDNS's loadbalance do: every
// run of A or AAAA records of one owner, and every run of SRV records of
// one priority, starts turn records further on. Other records keep their
// place, so a CNAME still precedes what it points to. Resolve itself
// never rotates: its answers stay the same for a snapshot.
func Rotate(resp *dns.Msg, turn uint) {
	rrs := resp.Answer
	for start := 0; start < len(rrs); {
		end := start + 1
		for end < len(rrs) && sameRotation(rrs[start], rrs[end]) {
			end++
		}
		if run := rrs[start:end]; len(run) > 1 && rotatable(run[0]) {
			rotateRun(run, int(turn%uint(len(run))))
		}
		start = end
	}
}

// rotatable reports whether rr's type is rotated.
func rotatable(rr dns.RR) bool {
	switch rr.Header().Rrtype {
	case dns.TypeA, dns.TypeAAAA, dns.TypeSRV:
		return true
	}
	return false
}

// sameRotation reports whether x and y belong to one run: the same type
// and owner, and for SRV the same priority.
func sameRotation(x, y dns.RR) bool {
	hx, hy := x.Header(), y.Header()
	if hx.Rrtype != hy.Rrtype || !strings.EqualFold(hx.Name, hy.Name) {
		return false
	}
	sx, isSRV := x.(*dns.SRV)
	return !isSRV || sx.Priority == y.(*dns.SRV).Priority
}

// rotateRun moves the first k records of run to its end, in place.
func rotateRun(run []dns.RR, k int) {
	if k == 0 {
		return
	}
	slices.Reverse(run[:k])
	slices.Reverse(run[k:])
	slices.Reverse(run)
}
