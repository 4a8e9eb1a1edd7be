package fastpath

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Source is where a Cache gets the packed answers it serves on a miss: the
// ordinary path, run once per name and type.
type Source interface {
	// Version identifies the data answers come from, and changes whenever
	// any answer may (a new snapshot). It is called once per batch of
	// queries and must be cheap.
	Version() uint64
	// Fill returns the ordinary path's answer to the query for name
	// (lower case, fully qualified) and qtype, class IN, with ID 0, RD and
	// CD clear, and an OPT record (version 0, no flags, no options) with
	// the server's largest UDP size: the response carries that OPT record
	// last, and is truncated (TC) only if it does not fit that size. ok is
	// false when queries for name and qtype must take the ordinary path
	// (names outside the zones, answers that depend on who asks, no data
	// yet); the Answer then still says what that depends on.
	Fill(name string, qtype uint16) (a Answer, ok bool)
}

// DNSSECSource is a Source that also answers queries with the DO bit:
// FillDNSSEC is Fill for such a query (its OPT record has the DO bit; the
// response's may too). Without it, queries with the DO bit take the
// ordinary path.
type DNSSECSource interface {
	Source
	FillDNSSEC(name string, qtype uint16) (a Answer, ok bool)
}

// RecursiveSource is a Source that also fills Recursive answers: the
// forwarder's cached replies for names outside the zones.
type RecursiveSource interface {
	Source
	// RecursionAllowed reports whether client may have Recursive answers.
	RecursionAllowed(client netip.Addr) bool
	// Generation changes whenever Recursive answers filled before may no
	// longer hold (the forwarder's upstreams, cache or stub domains
	// changed). It is called once per batch of queries and must be cheap.
	Generation() uint64
}

// Answer is one packed answer and what it depends on.
type Answer struct {
	// Wire is the packed response (see Source.Fill).
	Wire []byte
	// Version is the Version the answer was computed from.
	Version uint64
	// Zone is the served zone the name is in, the answer's zone label in
	// the Stats.
	Zone string
	// Names are the names (lower case, fully qualified) the answer was
	// made from, with everything at or below them: a change of records
	// under none of them leaves the answer as it is (see Changes).
	Names []string
	// Volatile answers may change with any change; Names do not matter.
	Volatile bool
	// SerialIsVersion says that the serial of an SOA record in the
	// authority section is the low 32 bits of the version: it is updated
	// when the answer is served at a later version.
	SerialIsVersion bool
	// Rotate says that the answer's A, AAAA or SRV RRset turns by one
	// record on each reply (see rotation); an answer whose RRset cannot be
	// turned in place is left to the ordinary path.
	Rotate bool
	// Expires, if not zero, is when the answer stops being served (its
	// signatures are due to be made again) and is filled again.
	Expires time.Time
	// Recursive answers are the forwarder's (see recursive.go), filled
	// by a RecursiveSource: served only to a query with RD set and CD and
	// AD clear from a client it allows, until Expires (which they must
	// have) and while Generation is the source's; every TTL is lowered
	// by the whole seconds since Stored, and Hit is called for each
	// reply. Not ok, they leave no marker: the next query asks again.
	Recursive  bool
	Stored     time.Time
	Generation uint64
	Hit        func()
	// CNAMEFirst says that a Recursive answer's first record is the
	// search path's CNAME (SearchSource.FillSearch): its TTL is the
	// zone's and does not age.
	CNAMEFirst bool
	// DeniedBelow, if set, says that the answer (NXDOMAIN, without the DO
	// bit) is the answer to every name at or below this one (lower case,
	// fully qualified, the question's name or above it) but for the
	// question, and that a change at or below it is one to Names.
	DeniedBelow string
	// SearchNamespace, if set, says that the answer is served to every
	// client but the pods of this namespace, which get a SearchSource's
	// FillSearch answer (a pod's first search-path query with autopath).
	SearchNamespace string
}

// CacheConfig says where a Cache gets its answers and how many it keeps.
type CacheConfig struct {
	Source Source
	// Changes, if set, lets the cache keep the answers a new version did
	// not touch; without it a new version empties the cache.
	Changes *Changes
	// MaxUDPSize is the server's largest UDP response (the size the
	// answers were made for).
	MaxUDPSize int
	// MaxEntries bounds the answers kept (at least 1): a full cache is
	// emptied before the next answer is kept, so a flood of names asked
	// once cannot keep the names asked often out for long. With a Store,
	// the Store's bound applies.
	MaxEntries int
	// Store, if set, is where the answers are kept: Caches sharing a Store
	// (one per socket) pack and keep each answer once. Without one the
	// Cache has a Store of its own.
	Store *Store
	// Stats counts the cache's fills (its misses) and names the Series of
	// its answers; the reader counts the answers.
	Stats *Shard
	// Turns, if set, counts the replies with a rotation of every Cache
	// that shares it (one per TCP connection), so that each connection's
	// first answer is not the same; without it the Cache counts its own.
	Turns *atomic.Uint32
}

// Cache answers plain queries from packed answers, filled lazily from an
// Source and kept across versions until a change touches what
// they were made from. A Cache belongs to one goroutine; its Store may be
// shared.
type Cache struct {
	cfg    CacheConfig
	dnssec DNSSECSource // cfg.Source, if it is one
	store  *Store
	key    []byte // scratch for the key of the query at hand
	cutKey []byte // scratch for the keys of the denial entries tried (lookup)
	turn   uint32 // replies with a rotation so far
	now    int64  // Unix time read by Refresh, once per batch: expiries are checked against it
	nanos  int64  // the same time in nanoseconds: Recursive answers' TTLs are aged by it

	recursive  RecursiveSource // cfg.Source, if it is one
	generation uint64          // its Generation, read by Refresh

	search SearchSource    // cfg.Source, if it is one
	pods   map[podKey]bool // its PodOf answers at version podsAt
	podsAt uint64          //
}

// Store is the packed answers one or more Caches keep, indexed by what
// they were made from. It is safe for concurrent use.
type Store struct {
	maxEntries int
	seen       atomic.Uint64 // version, readable without mu
	searches   atomic.Bool   // a pod's search answer was kept (lookup looks for them)

	mu       sync.Mutex          // guards the fields below
	version  uint64              // the Source version the entries are at
	entries  map[string]entry    // by cache key: lower-cased wire name and type
	deps     map[uint64][]string // name's hash → keys of the entries made from it
	seed     maphash.Seed        // of the names' hashes
	volatile []string            // keys of the entries any change drops
	refs     int                 // keys held in deps and volatile
}

// NewStore returns an empty Store at src's current version that keeps
// at most maxEntries answers (at least 1).
func NewStore(src Source, maxEntries int) *Store {
	s := &Store{maxEntries: max(maxEntries, 1), version: src.Version(), seed: maphash.MakeSeed()}
	s.seen.Store(s.version)
	s.reset()
	return s
}

// entry is one cached answer. A kept answer's wire and its key in the
// store share one string.
type entry struct {
	wire     string     // the answer with its OPT record; "": the ordinary path answers
	series   Series     // what it is counted under
	serialAt int32      // offset of the SOA serial to set to the version; 0: none
	rot      rotation   // how its records turn between replies
	expires  int64      // Unix time from which it is filled again; 0: never
	fwd      *forwarded // set for a Recursive answer: who may have it, how its TTLs age
	searchNS string     // pods of this namespace get another answer (SearchSource); "": none
	cut      *denial    // set for a denial entry: the answer of every name below its own
}

// NewCache returns a Cache, empty unless its Store holds answers.
func NewCache(cfg CacheConfig) *Cache {
	store := cfg.Store
	if store == nil {
		store = NewStore(cfg.Source, cfg.MaxEntries)
	}
	dnssec, _ := cfg.Source.(DNSSECSource)
	recursive, _ := cfg.Source.(RecursiveSource)
	c := &Cache{cfg: cfg, dnssec: dnssec, recursive: recursive, store: store, key: make([]byte, 0, maxNameLen+4),
		cutKey: make([]byte, 0, maxNameLen+3)}
	if search, ok := cfg.Source.(SearchSource); ok {
		c.search, c.pods = search, map[podKey]bool{}
	}
	return c
}

// Len is the number of answers cached, including markers for names the
// ordinary path answers.
func (c *Cache) Len() int {
	c.store.mu.Lock()
	defer c.store.mu.Unlock()
	return len(c.store.entries)
}

// Reply appends the response to the query pkt from client to out[:0]
// and returns it, with the Series it is counted under. ok is false when
// the ordinary path must answer pkt. client (nil: unknown) only matters
// to Recursive answers.
func (c *Cache) Reply(out, pkt []byte, client net.Addr) (_ []byte, _ Series, ok bool) {
	return c.appendReply(out[:0], pkt, client, false)
}

// AppendStreamReply appends the response to the query pkt, read from a
// stream (TCP), to out and returns it, with the Series it is counted
// under. Unlike Reply, it answers whatever the requester's EDNS0 size: a
// stream's answer is never truncated. ok is false (and out unchanged)
// when the ordinary path must answer pkt.
func (c *Cache) AppendStreamReply(out, pkt []byte, client net.Addr) (_ []byte, _ Series, ok bool) {
	return c.appendReply(out, pkt, client, true)
}

func (c *Cache) appendReply(out, pkt []byte, client net.Addr, stream bool) (_ []byte, _ Series, ok bool) {
	q, key, ok := parseQuery(pkt, c.key[:0])
	c.key = key
	if !ok || (q.do && c.dnssec == nil) {
		return out, Series{}, false
	}
	e, version, ok := c.entryFor(key, q, client)
	if !ok {
		return out, Series{}, false
	}
	if e.cut != nil {
		return c.appendDenial(out, pkt, q, e, version, stream)
	}
	n, fits := e.size(q, c.cfg.MaxUDPSize, stream)
	if !fits || (e.fwd != nil && !c.mayRecurse(pkt, client)) {
		return out, Series{}, false
	}
	start := len(out)
	out = append(out, e.wire[:n]...)
	resp := out[start:]
	if e.rot.n > 1 {
		e.rot.apply(resp, e.wire, c.nextTurn())
	}
	patch(resp, pkt, q)
	if e.serialAt > 0 {
		binary.BigEndian.PutUint32(resp[e.serialAt:], uint32(version))
	}
	if e.fwd != nil {
		e.fwd.serve(resp, c.nanos)
	}
	return out, e.series, true
}

// entryFor returns the entry that answers q, whose cache key is key, from
// client, and the version the store is at: its own; a pod's search answer
// (searchedEntry); the denial entry of a name at or above it (lookup);
// or the source's answer. ok is false when the ordinary path must answer.
func (c *Cache) entryFor(key []byte, q query, client net.Addr) (entry, uint64, bool) {
	e, version, searched, found := c.lookup(key, q)
	if searched {
		if c.isPod(client, e.searchNS) {
			return e, version, true
		}
		found = false // the plain answer is not kept
	}
	if !found {
		e = c.fill(key, q, client)
	}
	if e.searchNS != "" {
		e, found = c.searchedEntry(e, key, q, client)
		return e, version, found
	}
	return e, version, true
}

// nextTurn counts a reply with a rotation and returns how many there were.
func (c *Cache) nextTurn() uint32 {
	if c.cfg.Turns != nil {
		return c.cfg.Turns.Add(1)
	}
	c.turn++
	return c.turn
}

// get returns the entry of key and the version the store is at. An
// entry past its expiry at now (Unix time), or a Recursive one of another
// generation, is deleted and not found.
func (s *Store) get(key []byte, now int64, generation uint64) (entry, uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, found := s.getLocked(key, now, generation)
	return e, s.version, found
}

// getLocked is get with mu held.
func (s *Store) getLocked(key []byte, now int64, generation uint64) (entry, bool) {
	e, found := s.entries[string(key)]
	if found && (e.expires != 0 && now >= e.expires || e.fwd != nil && e.fwd.generation != generation) {
		delete(s.entries, string(key)) // its deps and volatile references only cost a fill
		return entry{}, false
	}
	return e, found
}

// size is how much of the entry answers q, and whether that fits the
// requester's limit: over a stream any size, else its EDNS0 size clamped
// to [512, maxUDPSize], or 512.
func (e entry) size(q query, maxUDPSize int, stream bool) (int, bool) {
	if e.wire == "" {
		return 0, false
	}
	return fitting(len(e.wire), q, maxUDPSize, stream)
}

// fitting is how much of an answer of size bytes (with its OPT record)
// answers q, and whether that fits the requester's limit (see size).
func fitting(size int, q query, maxUDPSize int, stream bool) (int, bool) {
	if !q.edns {
		n := size - optLen
		return n, stream || n <= minMsgSize
	}
	return size, stream || size <= min(max(int(q.udpSize), minMsgSize), maxUDPSize)
}

// patch makes the cached answer out the answer to pkt: its ID, RD and CD
// bits, its question's letter case, and no OPT record if it had none.
func patch(out, pkt []byte, q query) {
	out[0], out[1] = pkt[0], pkt[1]
	out[2] = out[2]&^bitRD | pkt[2]&bitRD
	out[3] = out[3]&^bitCD | pkt[3]&bitCD
	copy(out[headerLen:q.nameEnd], pkt[headerLen:q.nameEnd])
	if !q.edns {
		binary.BigEndian.PutUint16(out[arcountAt:], binary.BigEndian.Uint16(out[arcountAt:])-1)
	}
}

// fill asks the source for the answer of key and stores it, or a marker
// when the ordinary path must answer. An answer from another version than
// the store's is served but not kept.
func (c *Cache) fill(key []byte, q query, client net.Addr) entry {
	name := key[:q.nameEnd-headerLen]
	c.cfg.Stats.fill()
	a, ok := c.ask(presentationName(name), q)
	if a.Recursive {
		return c.fillRecursive(key, q, a, ok && c.usable(a.Wire, name, q.do))
	}
	if ok && a.SearchNamespace != "" && c.isPod(client, a.SearchNamespace) {
		return entry{searchNS: a.SearchNamespace} // not kept: the pods of the namespace get their own
	}
	if ok && a.DeniedBelow != "" && !q.do && c.usable(a.Wire, name, false) {
		if e, kept := c.keepDenial(key, q, a); kept {
			return e
		}
	}
	var wire []byte
	var e entry
	if ok && c.usable(a.Wire, name, q.do) {
		wire, e.series = a.Wire, c.cfg.Stats.stats.Series(a.Zone, q.qtype, true, int(a.Wire[3]&0xF))
		if !a.Expires.IsZero() {
			e.expires = a.Expires.Unix()
		}
		if a.SerialIsVersion {
			e.serialAt = int32(soaSerialAt(a.Wire))
		}
		if a.Rotate {
			e.rot, wire = rotationOf(a.Wire)
		}
		e.searchNS = a.SearchNamespace
	}
	return c.store.keep(key, wire, e, a)
}

// ask is the source's answer to q, a query for name.
func (c *Cache) ask(name string, q query) (Answer, bool) {
	if q.do {
		return c.dnssec.FillDNSSEC(name, q.qtype)
	}
	return c.cfg.Source.Fill(name, q.qtype)
}

// keep stores e with its answer wire under key, indexed by what it
// depends on, if a is of the store's version and no other Cache stored it
// meanwhile, and returns the entry to serve. Key and answer are copied
// into one string.
func (s *Store) keep(key, wire []byte, e entry, a Answer) entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a.Version != s.version {
		e.wire = string(wire)
		return e
	}
	if kept, dup := s.entries[string(key)]; dup {
		return kept
	}
	if len(s.entries) >= s.maxEntries || s.refs >= 4*s.maxEntries {
		s.reset()
	}
	both := string(key) + string(wire)
	k := both[:len(key)]
	e.wire = both[len(key):]
	s.entries[k] = e
	if a.Volatile {
		s.volatile = append(s.volatile, k)
		s.refs++
		return e
	}
	for _, n := range a.Names {
		h := s.nameHash(n)
		s.deps[h] = append(s.deps[h], k)
	}
	s.refs += len(a.Names)
	return e
}

// usable checks that wire is what Source promises, so that patching it is
// safe: one question with the name asked, a plain OPT record last (with
// the DO bit only when do), no TC.
func (c *Cache) usable(wire, name []byte, do bool) bool {
	const bitTC = 0x02
	end := headerLen + len(name)
	if len(wire) < end+4+optLen || wire[2]&bitTC != 0 || binary.BigEndian.Uint16(wire[4:]) != 1 ||
		binary.BigEndian.Uint16(wire[arcountAt:]) == 0 || !bytes.Equal(wire[headerLen:end], name) {
		return false
	}
	size, hasDO, ok := plainOPT(wire[len(wire)-optLen:])
	return ok && int(size) == c.cfg.MaxUDPSize && (do || !hasDO)
}
