package resolver

import (
	"cmp"
	"slices"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/skydns/snapshot"
)

// DefaultPriority is the SRV priority and MX preference of records that
// carry none, as SkyDNS and CoreDNS's etcd plugin use.
const DefaultPriority = 10

// srv answers an SRV question: one record per record at or below the name
// that has a host, once per (target, port, priority). Weights are
// normalized per priority over the records answered (see srvWeight);
// targets are the host, or for an address a name made from the record's
// key, whose address then goes into the additional section.
func (res *resolution) srv() (answer, extra []dns.RR) {
	rs := res.lookup(res.storeName(res.lname), dns.TypeSRV)
	defer rs.release()
	g := glue{res: res}
	picks := make([]srvPick, 0, 16)
	for i := range rs.es {
		e := &rs.es[i]
		if isText(e) {
			continue
		}
		target, port, prio := res.target(e), uint16(e.Record.Port), res.r.priority(e)
		if g.want(e, target, port, prio) {
			picks = append(picks, srvPick{e: e, target: target, port: port, priority: prio})
		}
	}
	totals := weightTotals(picks)
	slices.SortStableFunc(picks, func(x, y srvPick) int { return cmp.Compare(x.priority, y.priority) }) // runs to rotate (see Rotate)
	for _, p := range picks {
		answer = append(answer, &dns.SRV{
			Hdr:      res.hdr(res.q.Name, dns.TypeSRV, res.ttl(p.e)),
			Priority: p.priority, Weight: totals.weight(p), Port: p.port, Target: p.target,
		})
	}
	return answer, g.extra
}

// srvPick is a record that answers an SRV question, and its target.
type srvPick struct {
	e        *snapshot.Entry
	target   string
	port     uint16
	priority uint16
}

// mx answers an MX question from the records with "mail": true; the
// preference is the record's priority.
func (res *resolution) mx() (answer, extra []dns.RR) {
	rs := res.lookup(res.storeName(res.lname), dns.TypeMX)
	defer rs.release()
	g := glue{res: res}
	for i := range rs.es {
		e := &rs.es[i]
		if !e.Record.Mail || isText(e) {
			continue
		}
		target, pref := res.target(e), res.r.priority(e)
		if g.want(e, target, pref, pref) {
			answer = append(answer, &dns.MX{Hdr: res.hdr(res.q.Name, dns.TypeMX, res.ttl(e)), Preference: pref, Mx: target})
		}
	}
	return answer, g.extra
}

// target is the name an SRV, MX or NS record of e points to: its host
// name, or for an address the name of its key; targetstrip labels are
// removed from the left of either.
func (res *resolution) target(e *snapshot.Entry) string {
	if isAddress(e) {
		return res.r.keyName(e.Key(), e.Record.TargetStrip)
	}
	return targetStrip(e.Record.Host, e.Record.TargetStrip)
}

// priority is e's SRV priority or MX preference: its own, else the
// configured default.
func (r *Resolver) priority(e *snapshot.Entry) uint16 {
	if e.Record.Priority == 0 {
		return r.defaultPriority
	}
	return uint16(e.Record.Priority)
}

// rawWeight is a record's weight, 100 when it carries none.
func rawWeight(e *snapshot.Entry) int {
	if e.Record.Weight == 0 {
		return 100
	}
	return e.Record.Weight
}

// priorityTotals sums the raw weights of the records of each priority.
type priorityTotals []struct {
	priority uint16
	total    int
}

func weightTotals(picks []srvPick) priorityTotals {
	var t priorityTotals
	for _, p := range picks {
		t = t.add(p.priority, rawWeight(p.e))
	}
	return t
}

func (t priorityTotals) add(p uint16, w int) priorityTotals {
	for i := range t {
		if t[i].priority == p {
			t[i].total += w
			return t
		}
	}
	return append(t, struct {
		priority uint16
		total    int
	}{p, w})
}

// weight is SkyDNS's SRV weight: the record's share, in percent rounded
// down, of the raw weights of its priority; at least 1.
func (t priorityTotals) weight(p srvPick) uint16 {
	for _, pt := range t {
		if pt.priority == p.priority {
			return uint16(max(1, 100*rawWeight(p.e)/pt.total))
		}
	}
	return 1
}
