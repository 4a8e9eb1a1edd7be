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

// resolution is the work of answering one question from one snapshot: the
// zone it is in, the CNAME chain being followed, the names read.
type resolution struct {
	r     *Resolver
	snap  *snapshot.Snapshot
	zone  *zone
	q     dns.Question
	lname string // q.Name, fully qualified, lower case
	apex  bool   // q.Name is the zone's apex

	chain   [maxChain]string // names whose CNAME is being followed
	depth   int              // entries of chain in use
	follows int              // in-zone CNAMEs followed so far

	visit func(name string) // told every name whose records are read (ResolveIn)
}

// resolutions are pooled: following CNAMEs is recursive, so a resolution
// always escapes to the heap.
var resolutionPool = sync.Pool{New: func() any { return new(resolution) }}

func newResolution(r *Resolver, snap *snapshot.Snapshot, z *zone, q dns.Question) *resolution {
	lname := lowerFqdn(q.Name)
	res := resolutionPool.Get().(*resolution)
	*res = resolution{r: r, snap: snap, zone: z, q: q, lname: lname, apex: lname == z.name, visit: noVisit}
	return res
}

func noVisit(string) {}

func (res *resolution) release() {
	*res = resolution{}
	resolutionPool.Put(res)
}

// answer returns the answer and additional sections; an empty answer is
// made NODATA or NXDOMAIN by the caller.
func (res *resolution) answer() (answer, extra []dns.RR) {
	qtype := res.q.Qtype
	switch {
	case res.apex && qtype == dns.TypeSOA:
		return []dns.RR{res.soa(res.q.Name)}, nil
	case res.apex && qtype == dns.TypeNS:
		return res.ns()
	case qtype == dns.TypeANY:
		return res.any(), nil
	case (qtype == dns.TypeA || qtype == dns.TypeAAAA) && res.nsSynthesized(res.lname):
		return res.follow(res.q.Name, res.lname, qtype, nil), nil // in reverse zones too
	case res.zone.reverse && qtype != dns.TypePTR:
		return nil, nil
	case qtype != dns.TypeA && qtype != dns.TypeAAAA && qtype != dns.TypeTXT && res.isPod():
		return nil, nil // pod names hold addresses only
	}
	switch qtype {
	case dns.TypeA, dns.TypeAAAA, dns.TypeTXT:
		return res.follow(res.q.Name, res.lname, qtype, nil), nil
	case dns.TypeCNAME:
		return res.cname(), nil
	case dns.TypeSRV:
		return res.srv()
	case dns.TypeMX:
		return res.mx()
	case dns.TypePTR:
		return res.ptr(), nil
	}
	return nil, nil
}

// exists reports whether the question's name exists: the apex always does,
// names under pod.<zone> as the pod mode says, other names when a record
// lives at or below them.
func (res *resolution) exists() bool {
	if kind, label := res.r.classifyPod(res.lname); kind != notPod {
		return res.podExists(kind, label, res.lname)
	}
	return res.apex || res.snap.Exists(res.q.Name) || res.nsSynthesized(res.lname)
}

// any answers an ANY question minimally (RFC 8482) with one HINFO record.
func (res *resolution) any() []dns.RR {
	if !res.exists() {
		return nil
	}
	return []dns.RR{&dns.HINFO{Hdr: res.hdr(res.q.Name, dns.TypeHINFO, res.r.ttl), Cpu: "RFC8482"}}
}

// storeName is where the records of a lowercase name live: the apex's own
// records live under apex.dns.<zone>, everything else at its own key.
func (res *resolution) storeName(lname string) string {
	if z := res.r.findZone(lname); z != nil && z.name == lname {
		return z.apex
	}
	return lname
}

func (res *resolution) hdr(name string, rrtype uint16, ttl uint32) dns.RR_Header {
	return dns.RR_Header{Name: name, Rrtype: rrtype, Class: dns.ClassINET, Ttl: min(ttl, res.r.maxTTL)}
}

func (res *resolution) ttl(e *snapshot.Entry) uint32 {
	if e.Record.TTL != 0 {
		return e.Record.TTL
	}
	return res.r.ttl
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
func (res *resolution) lookup(store string, qtype uint16) *records {
	return res.read(store, qtype, false)
}

// exact is lookup restricted to the store name's own key.
func (res *resolution) exact(store string, qtype uint16) *records {
	return res.read(store, qtype, true)
}

// read is lookup, or exact when ownKeyOnly.
func (res *resolution) read(store string, qtype uint16, ownKeyOnly bool) *records {
	res.visit(store)
	rs := recordsPool.Get().(*records)
	if ownKeyOnly {
		rs.es = res.snap.AppendExact(rs.es[:0], store)
	} else {
		rs.es = res.snap.AppendLookup(rs.es[:0], store)
	}
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
