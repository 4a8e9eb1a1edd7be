package skydns

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/internal/dnstest"
	"github.com/kubesky/kubesky/skydns/dnsserver"
	"github.com/kubesky/kubesky/skydns/fastpath"
	"github.com/kubesky/kubesky/skydns/forward"
	"github.com/kubesky/kubesky/skydns/resolver"
	"github.com/kubesky/kubesky/skydns/snapshot/snapshottest"
)

// The differential fuzz test: for every query the fast path answers, its
// bytes are the ordinary path's bytes (router, EDNS, truncation, packed)
// for the same query with its name in lower case, with the question's
// letter case as asked; and the message is the ordinary path's answer to
// the query as asked, record for record, ignoring the case of names (the
// ordinary path compresses case-sensitively). Every plain query it may
// answer (in the zones, fitting the requester, not depending on who asks)
// it must answer. The same holds over TCP, where the fast path answers
// whatever the requester's EDNS size (the ordinary path's TCP answer is
// never truncated), and must answer every plain query whose answer fits
// the server's largest UDP size (the size the cached answers are made
// for); each TCP answer is appended to the connection's batch without
// touching what the batch holds.

// fuzzRecords is a small cluster with every kind of record: addresses of
// both families, SRV with glue, headless endpoints, an in-zone alias and
// one leaving the zones, TXT, MX, PTR, groups, name servers, and one name
// whose answer needs more than 512 bytes.
func fuzzRecords() map[string]string {
	r := map[string]string{}
	add := func(name, label, value string) { r[contract.Key(contract.DefaultPrefix, name)+"/"+label] = value }
	svc := func(s string) string { return s + ".default.svc.cluster.local." }
	add(svc("web"), "a1", `{"host":"10.96.0.1"}`)
	add(svc("web"), "a2", `{"host":"fd00::1","ttl":60}`)
	add("_http._tcp."+svc("web"), "p", `{"host":"web.default.svc.cluster.local.","port":80}`)
	add(svc("hl"), "pod-a", `{"host":"10.1.0.1"}`)
	add(svc("hl"), "pod-b", `{"host":"10.1.0.2"}`)
	add("_http._tcp."+svc("hl"), "pod-a", `{"host":"pod-a.hl.default.svc.cluster.local.","port":8080}`)
	add(svc("alias"), "c", `{"host":"web.default.svc.cluster.local."}`)
	add(svc("ext"), "e", `{"host":"example.com."}`)
	add(svc("txt"), "t", `{"text":"hello world"}`)
	add(svc("mx"), "m", `{"host":"mail.example.com.","mail":true,"priority":10}`)
	add(svc("grp"), "g1", `{"host":"10.2.0.1","group":"g"}`)
	add(svc("grp"), "g2", `{"host":"10.2.0.2","group":"h"}`)
	add(svc("strip"), "s", `{"host":"10.3.0.1","port":53,"targetstrip":1}`)
	add("ns.dns.cluster.local.", "ns1", `{"host":"10.0.0.10"}`)
	add("cluster.local.", "dns-version", `{"text":"1.1.0"}`)
	add("1.0.96.10.in-addr.arpa.", "ptr", `{"host":"web.default.svc.cluster.local."}`)
	for i := range 40 {
		add(svc("big"), fmt.Sprintf("b%d", i), fmt.Sprintf(`{"host":"10.4.0.%d"}`, i))
	}
	return r
}

// fuzzNames are the names queries are made of (then given random case).
var fuzzNames = []string{
	"web.default.svc.cluster.local.", "a1.web.default.svc.cluster.local.", "_http._tcp.web.default.svc.cluster.local.",
	"hl.default.svc.cluster.local.", "pod-a.hl.default.svc.cluster.local.", "_http._tcp.hl.default.svc.cluster.local.",
	"alias.default.svc.cluster.local.", "ext.default.svc.cluster.local.", "txt.default.svc.cluster.local.",
	"mx.default.svc.cluster.local.", "grp.default.svc.cluster.local.", "strip.default.svc.cluster.local.",
	"big.default.svc.cluster.local.", "default.svc.cluster.local.", "svc.cluster.local.", "cluster.local.",
	"dns-version.cluster.local.", "ns.dns.cluster.local.", "nope.default.svc.cluster.local.",
	"*.default.svc.cluster.local.", "any.default.svc.cluster.local.", "web.*.svc.cluster.local.",
	"1.0.96.10.in-addr.arpa.", "2.0.96.10.in-addr.arpa.", "in-addr.arpa.", "ip6.arpa.",
	"example.com.", "local.", ".", "a-b_c.default.svc.cluster.local.",
}

var fuzzTypes = []uint16{
	dns.TypeA, dns.TypeAAAA, dns.TypeSRV, dns.TypeTXT, dns.TypePTR, dns.TypeCNAME, dns.TypeMX, dns.TypeNS,
	dns.TypeSOA, dns.TypeANY, dns.TypeAXFR, dns.TypeIXFR, dns.TypeHINFO, dns.TypeHTTPS, dns.TypeOPT, 0, 0xff00,
}

// fuzzQuery is one generated query and whether it is plain.
type fuzzQuery struct {
	packed []byte
	plain  bool // the fast path may answer it
	sure   bool // plain by construction: the fast path must answer it if it can
}

// makeFuzzQuery builds a query from the fuzzer's numbers.
func makeFuzzQuery(id uint16, nameSel uint8, caseBits uint64, typeSel uint8, flags uint16, ednsSel uint8, ednsSize uint16) fuzzQuery {
	name := mixCase(fuzzNames[int(nameSel)%len(fuzzNames)], caseBits)
	m := new(dns.Msg)
	m.Id = id
	m.Question = []dns.Question{{Name: name, Qtype: fuzzTypes[int(typeSel)%len(fuzzTypes)], Qclass: dns.ClassINET}}
	m.RecursionDesired, m.CheckingDisabled = flags&1 != 0, flags&2 != 0
	m.AuthenticatedData, m.Truncated, m.Zero = flags&4 != 0, flags&8 != 0, flags&16 != 0
	plain := !isTransfer(m.Question[0].Qtype)
	switch flags >> 13 { // rarely: something that is not plain
	case 1:
		m.Question[0].Qclass = dns.ClassCHAOS
		plain = false
	case 2:
		m.Question = append(m.Question, m.Question[0])
		plain = false
	case 3:
		m.Opcode = dns.OpcodeNotify
		plain = false
	}
	plain = addEDNS(m, ednsSel, ednsSize) && plain
	packed, err := m.Pack()
	if err != nil {
		panic(err)
	}
	return fuzzQuery{packed: packed, plain: plain, sure: true}
}

// addEDNS gives m an OPT record per sel and reports whether the query
// stays plain.
func addEDNS(m *dns.Msg, sel uint8, size uint16) bool {
	switch sel % 6 {
	case 0, 1:
		return true
	case 2, 3:
		m.SetEdns0(size, false)
		return true
	case 4:
		m.SetEdns0(size, true) // DO: plain, with an answer of its own
		return true
	default:
		m.SetEdns0(size, false)
		m.IsEdns0().Option = []dns.EDNS0{&dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: "0102030405060708"}}
	}
	return false
}

// mixCase upper-cases the letters of name whose bit is set in bits.
func mixCase(name string, bits uint64) string {
	b := []byte(name)
	for i, c := range b {
		if 'a' <= c && c <= 'z' && bits&(1<<(uint(i)%64)) != 0 {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// fuzzForwarder is a forwarder whose upstream, on 127.0.0.1, answers A
// with two addresses, MX with a glue address, AAAA with no data and
// every other question with NXDOMAIN, the last two with a SOA.
func fuzzForwarder(tb testing.TB) *forward.Forwarder {
	tb.Helper()
	upstream := dnstest.StartServer(tb, dnstest.Reply(func(q *dns.Msg) *dns.Msg {
		resp := new(dns.Msg).SetReply(q)
		name := q.Question[0].Name
		mail := strings.TrimPrefix("mail."+name, ".") // mail. below the root
		if name == "." {
			mail = "mail."
		}
		hdr := func(name string, rrtype uint16, ttl uint32) dns.RR_Header {
			return dns.RR_Header{Name: name, Rrtype: rrtype, Class: dns.ClassINET, Ttl: ttl}
		}
		soa := &dns.SOA{Hdr: hdr(".", dns.TypeSOA, 60), Ns: "ns.", Mbox: "host.", Serial: 1, Minttl: 30}
		switch q.Question[0].Qtype {
		case dns.TypeA:
			resp.Answer = []dns.RR{&dns.A{Hdr: hdr(name, dns.TypeA, 300), A: net.IPv4(192, 0, 2, 1)},
				&dns.A{Hdr: hdr(name, dns.TypeA, 300), A: net.IPv4(192, 0, 2, 2)}}
		case dns.TypeMX:
			resp.Answer = []dns.RR{&dns.MX{Hdr: hdr(name, dns.TypeMX, 300), Preference: 10, Mx: mail}}
			resp.Extra = []dns.RR{&dns.A{Hdr: hdr(mail, dns.TypeA, 200), A: net.IPv4(192, 0, 2, 3)}}
		case dns.TypeAAAA:
			resp.Ns = []dns.RR{soa}
		default:
			resp.Rcode, resp.Ns = dns.RcodeNameError, []dns.RR{soa}
		}
		return resp
	}))
	cfg := forward.DefaultConfig()
	cfg.Upstreams = []string{upstream}
	f, err := forward.New(cfg, nil, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(f.Close)
	return f
}

// differential is the two paths over one snapshot.
type differential struct {
	mu     sync.Mutex // the cache belongs to one goroutine at a time
	router *router
	filler *cacheFiller
	cache  *fastpath.Cache
	served int
	// forwarded counts the answers served to names outside the zones.
	forwarded int
}

func newDifferential(tb testing.TB) *differential {
	return newDifferentialWith(tb, resolver.Config{Zones: []string{"cluster.local."}}, fuzzRecords(), false)
}

// newDifferentialWith is the two paths over records, with the resolver
// of cfg, and with autopath if set.
func newDifferentialWith(tb testing.TB, cfg resolver.Config, records map[string]string, autopath bool) *differential {
	tb.Helper()
	res, err := resolver.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	m := NewMirror(contract.DefaultPrefix, nil, slog.New(slog.DiscardHandler))
	changes := fastpath.NewChanges()
	m.beforePublish = recordChanges(changes, contract.DefaultPrefix)
	m.apply(snapshottest.Update(7, records))
	fwd := fuzzForwarder(tb)
	r := &router{resolver: res, mirror: m, forwarder: fwd, autopath: autopath}
	f := &cacheFiller{resolver: res, mirror: m, maxUDPSize: dnsserver.DefaultMaxUDPSize, lender: fwd, autopath: autopath}
	stats := fastpath.NewStats()
	return &differential{router: r, filler: f, cache: fastpath.NewCache(fastpath.CacheConfig{Source: f, Changes: changes,
		MaxUDPSize: dnsserver.DefaultMaxUDPSize, MaxEntries: 1000, Stats: stats.NewShard(true)})}
}

// ordinaryOver is the ordinary path's packed answer to packed over proto.
func (d *differential) ordinaryOver(t *testing.T, proto string, packed []byte) ([]byte, *dns.Msg) {
	t.Helper()
	req := new(dns.Msg)
	if err := req.Unpack(packed); err != nil {
		t.Fatalf("the fast path answered a query miekg/dns cannot read: %v", err)
	}
	resp := dnsserver.Reply(context.Background(), d.router,
		dnsserver.Query{Msg: req, Client: netip.MustParseAddr("127.0.0.1"), Proto: proto}, dnsserver.DefaultMaxUDPSize)
	wire, err := resp.Pack()
	if err != nil {
		t.Fatalf("the ordinary answer does not pack: %v", err)
	}
	return wire, resp
}

// check runs the differential check of q over UDP and over TCP.
func (d *differential) check(t *testing.T, q fuzzQuery) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.checkOver(t, "udp", q)
	d.checkOver(t, "tcp", q)
}

// The client of every query: one that may recurse.
var (
	fuzzUDPClient = &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 53000}
	fuzzTCPClient = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 53000}
)

// reply is the fast path's answer to q over proto: a TCP answer is
// appended after what the connection's batch already holds.
func (d *differential) reply(t *testing.T, proto string, q fuzzQuery) ([]byte, bool) {
	if proto == "udp" {
		fast, _, ok := d.cache.Reply(make([]byte, 0, dnsserver.DefaultMaxUDPSize), q.packed, fuzzUDPClient)
		return fast, ok
	}
	batch := []byte("earlier answers")
	fast, _, ok := d.cache.AppendStreamReply(batch, q.packed, fuzzTCPClient)
	if !bytes.HasPrefix(fast, batch) || !ok && len(fast) != len(batch) {
		t.Fatalf("a TCP answer changed the batch before it: %q", fast)
	}
	return fast[len(batch):], ok
}

// checkOver checks q over proto. A forwarded answer's TTLs age by the
// second: when the paths differ and a second began meanwhile, they may
// have read the clock on either side of it, and the check runs again.
func (d *differential) checkOver(t *testing.T, proto string, q fuzzQuery) {
	for {
		second := time.Now().Unix()
		d.cache.Refresh()
		msg := d.compareOver(t, proto, q)
		if msg == "" {
			return
		}
		if time.Now().Unix() == second {
			t.Fatal(msg)
		}
	}
}

// compareOver is what differs between the two paths' answers to q over
// proto, "" when nothing does.
func (d *differential) compareOver(t *testing.T, proto string, q fuzzQuery) string {
	fast, ok := d.reply(t, proto, q)
	if !ok {
		d.mustDecline(t, proto, q)
		return ""
	}
	d.served++
	if _, inZone := d.router.resolver.Zone(unpackMsg(t, q.packed).Question[0].Name); !inZone {
		d.forwarded++
	}
	if !q.plain {
		t.Fatalf("the fast path answered a query that is not plain over %s:\n%v", proto, unpackMsg(t, q.packed))
	}
	lower, nameEnd := lowerName(q.packed)
	want, _ := d.ordinaryOver(t, proto, lower)
	copy(want[12:nameEnd], q.packed[12:nameEnd])
	if !bytes.Equal(fast, want) {
		return fmt.Sprintf("fast path bytes differ from the ordinary path's over %s\nquery:\n%v\nfast:\n%v\nordinary:\n%v",
			proto, unpackMsg(t, q.packed), unpackMsg(t, fast), unpackMsg(t, want))
	}
	_, asked := d.ordinaryOver(t, proto, q.packed)
	got := unpackMsg(t, fast)
	if got.Question[0].Name != asked.Question[0].Name || !strings.EqualFold(got.String(), asked.String()) {
		return fmt.Sprintf("fast path answer differs from the ordinary answer to the query as asked\nfast:\n%v\nordinary:\n%v", got, asked)
	}
	return ""
}

// fuzzUpdates are changes to fuzzRecords' cluster, each one revision:
// new and removed addresses, targets and aliases moved, names appearing
// and disappearing, records below and above queried names.
var fuzzUpdates = []struct{ name, label, value string }{
	{"web.default.svc.cluster.local.", "a3", `{"host":"10.96.0.3"}`},
	{"web.default.svc.cluster.local.", "a1", ""},
	{"web.default.svc.cluster.local.", "a2", `{"host":"fd00::2"}`},
	{"_http._tcp.web.default.svc.cluster.local.", "p", `{"host":"hl.default.svc.cluster.local.","port":81}`},
	{"_http._tcp.web.default.svc.cluster.local.", "p", ""},
	{"hl.default.svc.cluster.local.", "pod-c", `{"host":"10.1.0.3"}`},
	{"hl.default.svc.cluster.local.", "pod-a", ""},
	{"alias.default.svc.cluster.local.", "c", `{"host":"hl.default.svc.cluster.local."}`},
	{"ext.default.svc.cluster.local.", "e", `{"host":"web.default.svc.cluster.local."}`},
	{"nope.default.svc.cluster.local.", "n", `{"host":"10.5.0.1"}`},
	{"nope.default.svc.cluster.local.", "n", ""},
	{"deep.web.default.svc.cluster.local.", "d", `{"text":"below"}`},
	{"default.svc.cluster.local.", "up", `{"host":"10.6.0.1"}`},
	{"txt.default.svc.cluster.local.", "t", `{"text":"changed"}`},
	{"grp.default.svc.cluster.local.", "g3", `{"host":"10.2.0.3","group":"g"}`},
	{"ns.dns.cluster.local.", "ns2", `{"host":"10.0.0.11"}`},
	{"1.0.96.10.in-addr.arpa.", "ptr", `{"host":"hl.default.svc.cluster.local."}`},
	{"2.0.96.10.in-addr.arpa.", "ptr", `{"host":"web.default.svc.cluster.local."}`},
	{"big.default.svc.cluster.local.", "b0", ""},
	{"mx.default.svc.cluster.local.", "m", ""},
	{"a-b_c.default.svc.cluster.local.", "x", `{"host":"10.7.0.1"}`},
	{"cluster.local.", "dns-version", `{"text":"1.2.0"}`},
	{"bad.default.svc.cluster.local.", "b", `{"host":`},
}

// update applies fuzzUpdates[i] as the next revision; the last choice is
// a full re-list of the original records.
func (d *differential) update(i int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	m := d.router.mirror
	rev := m.Snapshot().Revision() + 1
	i %= len(fuzzUpdates) + 1
	if i == len(fuzzUpdates) {
		m.apply(snapshottest.Update(rev, fuzzRecords()))
		return
	}
	up := fuzzUpdates[i]
	d.applyRecord(contract.Key(contract.DefaultPrefix, up.name)+"/"+up.label, up.value)
}

// applyRecord puts value at key (deletes it when value is "") as the next
// revision; d.mu is held.
func (d *differential) applyRecord(key, value string) {
	m := d.router.mirror
	ev := contract.Event{Type: contract.Put, Key: key, Value: []byte(value)}
	if value == "" {
		ev.Type = contract.Delete
	}
	m.apply(contract.Update{Revision: m.Snapshot().Revision() + 1, Events: []contract.Event{ev}})
}

// mustDecline fails when the fast path declined a query over proto it
// should answer: plain, in the zones, not leaving them, fitting the
// requester over UDP, or the server's largest UDP answer over TCP (the
// size the cached answers are made for).
func (d *differential) mustDecline(t *testing.T, proto string, q fuzzQuery) {
	if !q.plain || !q.sure {
		return
	}
	req := unpackMsg(t, q.packed)
	_, searched := d.router.resolver.SearchNamespace(req.Question[0].Name)
	if _, inZone := d.router.resolver.Zone(req.Question[0].Name); !inZone || d.router.autopath && searched {
		d.ordinaryOver(t, proto, q.packed) // as the server would: the forwarder caches it
		return
	}
	wire, resp := d.ordinaryOver(t, proto, q.packed)
	resolved := d.router.resolver.Resolve(d.router.mirror.Snapshot(), req) // before the external target is resolved
	cached := len(wire)                                                    // the cached answer's size: with an OPT record
	if req.IsEdns0() == nil {
		cached += 11
	}
	if _, leaves := d.router.resolver.ExternalTarget(resolved); leaves || resp.Truncated || cached > dnsserver.DefaultMaxUDPSize {
		return
	}
	t.Fatalf("the fast path declined a plain query it can answer over %s:\n%v\nordinary answer:\n%v", proto, req, resp)
}

// lowerName returns a copy of a packed query with its question's name in
// lower case, and the offset past that name.
func lowerName(packed []byte) ([]byte, int) {
	b := bytes.Clone(packed)
	off := 12
	for b[off] != 0 {
		n := int(b[off])
		copy(b[off+1:off+1+n], bytes.ToLower(b[off+1:off+1+n]))
		off += 1 + n
	}
	return b, off + 1
}

func unpackMsg(t *testing.T, b []byte) *dns.Msg {
	t.Helper()
	m := new(dns.Msg)
	if err := m.Unpack(b); err != nil {
		t.Fatalf("unpacking %x: %v", b, err)
	}
	return m
}

func FuzzFastPath(f *testing.F) {
	for i := range fuzzNames {
		for j := range fuzzTypes {
			f.Add(uint16(i*j), uint8(i), uint64(i)*0x9e3779b97f4a7c15, uint8(j), uint16(i+j)&0x1f, uint8(i+j), uint16(512+j*100))
		}
	}
	d := newDifferential(f)
	f.Fuzz(func(t *testing.T, id uint16, nameSel uint8, caseBits uint64, typeSel uint8, flags uint16, ednsSel uint8, ednsSize uint16) {
		d.check(t, makeFuzzQuery(id, nameSel, caseBits, typeSel, flags, ednsSel, ednsSize))
	})
}

// FuzzFastPathUpdates runs a script of queries and updates: answers kept
// across revisions must be the ordinary path's at the new revision. Each
// 8 bytes are one step; a first byte divisible by 4 makes it an update.
func FuzzFastPathUpdates(f *testing.F) {
	const maxSteps = 32 // short scripts keep the fuzzer's minimizing quick
	for i := range fuzzUpdates {
		var script []byte
		for pass := range 2 {
			for j := range 4 {
				name := byte(i+j*7) % byte(len(fuzzNames))
				script = append(script, 1, name, byte(i), byte(j), 1, 0, byte(2*pass), 0) // ask
			}
			if pass == 0 {
				script = append(script, 0, byte(i), 0, 0, 0, 0, 0, 0) // update
			}
		}
		f.Add(script)
	}
	f.Fuzz(func(t *testing.T, script []byte) {
		d := newDifferential(t)
		for steps := 0; len(script) >= 8 && steps < maxSteps; steps++ {
			step := script[:8]
			script = script[8:]
			if step[0]%4 == 0 {
				d.update(int(step[1]))
				continue
			}
			d.check(t, makeFuzzQuery(uint16(step[0])<<8|uint16(step[7]), step[1], uint64(step[2])*0x9e3779b97f4a7c15,
				step[3], uint16(step[4])|uint16(step[5])<<8, step[6], 512+uint16(step[7])*16))
		}
	})
}

// TestFastPathMatchesTheOrdinaryPath runs the differential check over every
// name and type, in three cases, with and without EDNS, so that the seeds
// alone prove the fast path answers (and answers right) most queries.
func TestFastPathMatchesTheOrdinaryPath(t *testing.T) {
	d := newDifferential(t)
	total := 0
	for i := range fuzzNames {
		for j := range fuzzTypes {
			for _, caseBits := range []uint64{0, ^uint64(0), 0x5555555555555555} {
				for _, edns := range []uint8{0, 2} {
					d.check(t, makeFuzzQuery(uint16(i<<8|j), uint8(i), caseBits, uint8(j), 1, edns, 1232))
					total++
				}
			}
		}
	}
	if d.served < total/2 {
		t.Fatalf("the fast path answered %d of %d queries; want most", d.served, total)
	}
	t.Logf("the fast path answered %d of %d queries, %d of them outside the zones", d.served, 2*total, d.forwarded)
	if d.forwarded == 0 {
		t.Fatal("the fast path answered no name outside the zones from the forwarder's cache")
	}
	t.Run("after each update, answers kept across revisions are the new ones", func(t *testing.T) {
		for u := range len(fuzzUpdates) + 1 {
			d.update(u)
			for i := range fuzzNames {
				for j := range fuzzTypes {
					d.check(t, makeFuzzQuery(uint16(u), uint8(i), uint64(u), uint8(j), 1, uint8(u%4), 1232))
				}
			}
		}
	})
}

// FuzzFastPathRaw feeds arbitrary bytes to the fast path: whatever it
// answers must be a query miekg/dns reads as plain, answered with the
// ordinary path's bytes.
func FuzzFastPathRaw(f *testing.F) {
	for i := range fuzzNames {
		for j := range fuzzTypes {
			f.Add(makeFuzzQuery(uint16(i), uint8(i), uint64(j), uint8(j), uint16(j), uint8(i+j), 1232).packed)
		}
	}
	d := newDifferential(f)
	f.Fuzz(func(t *testing.T, packed []byte) {
		req := new(dns.Msg)
		plain := req.Unpack(packed) == nil && isPlain(req) && plainCounts(packed)
		d.check(t, fuzzQuery{packed: packed, plain: plain})
	})
}

// plainCounts checks the header's counts, which miekg/dns's reading does
// not keep: one question, no answer or authority, at most one additional.
func plainCounts(packed []byte) bool {
	return len(packed) >= 12 && string(packed[4:10]) == "\x00\x01\x00\x00\x00\x00" && packed[10] == 0 && packed[11] <= 1
}

// isTransfer says whether qtype asks for a zone transfer, which the fast
// path leaves to the transfer handler.
func isTransfer(qtype uint16) bool { return qtype == dns.TypeAXFR || qtype == dns.TypeIXFR }

// isPlain says, from miekg/dns's reading of a query, whether the fast path
// may answer it (see package fastpath).
func isPlain(m *dns.Msg) bool {
	if m.Response || m.Opcode != dns.OpcodeQuery || len(m.Question) != 1 || len(m.Answer)+len(m.Ns) != 0 ||
		m.Question[0].Qclass != dns.ClassINET || len(m.Extra) > 1 || isTransfer(m.Question[0].Qtype) {
		return false
	}
	for _, c := range m.Question[0].Name {
		if !strings.ContainsRune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_*.", c) {
			return false
		}
	}
	if len(m.Extra) == 0 {
		return true
	}
	const ttlDO = 0x8000 // the DO bit alone in the OPT record's TTL
	opt, ok := m.Extra[0].(*dns.OPT)
	return ok && opt.Hdr.Name == "." && (opt.Hdr.Ttl == 0 || opt.Hdr.Ttl == ttlDO) && len(opt.Option) == 0
}
