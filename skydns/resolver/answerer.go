package resolver

import (
	"sync"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/skydns/snapshot"
)

// maxChain bounds the length of a CNAME chain; maxFollows bounds the
// in-zone CNAMEs followed for one question in all (a subtree can hold many
// aliases, each leading to more).
const (
	maxChain   = 8
	maxFollows = 64
)

// answerer builds the answer to one question.
type answerer struct {
	r     *Resolver
	snap  *snapshot.Snapshot
	zone  *zone
	q     dns.Question
	lname string // q.Name, fully qualified, lower case
	apex  bool   // q.Name is the zone's apex

	chain   [maxChain]string // names whose CNAME is being followed
	depth   int              // entries of chain in use
	follows int              // in-zone CNAMEs followed so far

	visit func(name string) // told every name whose records are read (ResolveVisiting)
}

// answerers are pooled: following CNAMEs is recursive, so an answerer
// always escapes to the heap.
var answererPool = sync.Pool{New: func() any { return new(answerer) }}

func newAnswerer(r *Resolver, snap *snapshot.Snapshot, z *zone, q dns.Question) *answerer {
	lname := lowerFqdn(q.Name)
	a := answererPool.Get().(*answerer)
	*a = answerer{r: r, snap: snap, zone: z, q: q, lname: lname, apex: lname == z.name, visit: noVisit}
	return a
}

func noVisit(string) {}

func (a *answerer) release() {
	*a = answerer{}
	answererPool.Put(a)
}

// answer returns the answer and additional sections; an empty answer is
// made NODATA or NXDOMAIN by the caller.
func (a *answerer) answer() (answer, extra []dns.RR) {
	qtype := a.q.Qtype
	switch {
	case a.apex && qtype == dns.TypeSOA:
		return []dns.RR{a.soa(a.q.Name)}, nil
	case a.apex && qtype == dns.TypeNS:
		return a.ns()
	case qtype == dns.TypeANY:
		return a.any(), nil
	case (qtype == dns.TypeA || qtype == dns.TypeAAAA) && a.nsSynthesized(a.lname):
		return a.follow(a.q.Name, a.lname, qtype, nil), nil // in reverse zones too
	case a.zone.reverse && qtype != dns.TypePTR:
		return nil, nil
	case qtype != dns.TypeA && qtype != dns.TypeAAAA && qtype != dns.TypeTXT && a.isPod():
		return nil, nil // pod names hold addresses only
	}
	switch qtype {
	case dns.TypeA, dns.TypeAAAA, dns.TypeTXT:
		return a.follow(a.q.Name, a.lname, qtype, nil), nil
	case dns.TypeCNAME:
		return a.cname(), nil
	case dns.TypeSRV:
		return a.srv()
	case dns.TypeMX:
		return a.mx()
	case dns.TypePTR:
		return a.ptr(), nil
	}
	return nil, nil
}

// exists reports whether the question's name exists: the apex always does,
// names under pod.<zone> as the pod mode says, other names when a record
// lives at or below them.
func (a *answerer) exists() bool {
	if kind, label := a.r.classifyPod(a.lname); kind != notPod {
		return a.podExists(kind, label, a.lname)
	}
	return a.apex || a.snap.Exists(a.q.Name) || a.nsSynthesized(a.lname)
}

// any answers an ANY question minimally (RFC 8482) with one HINFO record.
func (a *answerer) any() []dns.RR {
	if !a.exists() {
		return nil
	}
	return []dns.RR{&dns.HINFO{Hdr: a.hdr(a.q.Name, dns.TypeHINFO, a.r.ttl), Cpu: "RFC8482"}}
}

// storeName is where the records of a lowercase name live: the apex's own
// records live under apex.dns.<zone>, everything else at its own key.
func (a *answerer) storeName(lname string) string {
	if z := a.r.findZone(lname); z != nil && z.name == lname {
		return z.apex
	}
	return lname
}

func (a *answerer) hdr(name string, rrtype uint16, ttl uint32) dns.RR_Header {
	return dns.RR_Header{Name: name, Rrtype: rrtype, Class: dns.ClassINET, Ttl: ttl}
}

func (a *answerer) ttl(e *snapshot.Entry) uint32 {
	if e.Record.TTL != 0 {
		return e.Record.TTL
	}
	return a.r.ttl
}

// records holds the entries found for one name; release returns it.
type records struct {
	es   []snapshot.Entry
	used int // entries written before filtering, cleared on release
}

var recordsPool = sync.Pool{New: func() any { return &records{es: make([]snapshot.Entry, 0, 16)} }}

// lookup finds the records answering qtype at or below store (a store
// name, see storeName), drops those with no host unless qtype is TXT, and
// applies groups.
func (a *answerer) lookup(store string, qtype uint16) *records {
	a.visit(store)
	rs := recordsPool.Get().(*records)
	rs.es = a.snap.AppendLookup(rs.es[:0], store)
	rs.used = len(rs.es)
	return rs.filter(qtype)
}

// exact is lookup restricted to the store name's own key.
func (a *answerer) exact(store string, qtype uint16) *records {
	a.visit(store)
	rs := recordsPool.Get().(*records)
	rs.es = a.snap.AppendExact(rs.es[:0], store)
	rs.used = len(rs.es)
	return rs.filter(qtype)
}

func (rs *records) filter(qtype uint16) *records {
	if qtype != dns.TypeTXT {
		kept := rs.es[:0]
		for _, e := range rs.es {
			if e.Record.Host != "" {
				kept = append(kept, e)
			}
		}
		rs.es = kept
	}
	rs.es = grouped(rs.es)
	return rs
}

func (rs *records) release() {
	if cap(rs.es) > 1024 {
		return
	}
	clear(rs.es[:rs.used])
	rs.es, rs.used = rs.es[:0], 0
	recordsPool.Put(rs)
}

// Kinds of record: every record is exactly one of an address (an IP host),
// a text (a text and no IP host) or a name (a host name and no text), as
// SkyDNS's HostType decides. A name that is not a mail record is also an
// alias: a CNAME for A, AAAA, TXT and CNAME questions.
func isAddress(e *snapshot.Entry) bool { return e.IP != nil }
func isText(e *snapshot.Entry) bool    { return e.IP == nil && e.Record.Text != "" }
func isAlias(e *snapshot.Entry) bool   { return e.IP == nil && e.Record.Text == "" && !e.Record.Mail }
