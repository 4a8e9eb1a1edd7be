package dnssec

import (
	"bytes"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// maxCached bounds the signed RRsets kept: a full cache is emptied before
// the next one is kept, as the fast path's store is.
const maxCached = 50000

// sigCache keeps the signatures of RRsets, keyed by rrsetKey.
type sigCache struct {
	mu      sync.Mutex // guards entries
	entries map[string]cached
}

// cached is the signatures of one RRset and when to make them again.
type cached struct {
	sigs    []*dns.RRSIG
	refresh time.Time
}

func newSigCache() *sigCache { return &sigCache{entries: make(map[string]cached)} }

// get returns the signatures kept for key unless they are due for refresh
// at now.
func (c *sigCache) get(key string, now time.Time) ([]*dns.RRSIG, bool) {
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if !ok || !now.Before(e.refresh) {
		return nil, false
	}
	return e.sigs, true
}

func (c *sigCache) put(key string, e cached) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= maxCached {
		clear(c.entries)
	}
	c.entries[key] = e
}

// rrsetKey is what an RRset's signatures depend on: its owner in lower
// case and each record's type, class, TTL and RDATA as packed, in sorted
// order (a rotated RRset has the key of the unrotated one). buf is
// scratch space. The records are packed inside a message, never with
// dns.PackRR, which writes their Rdlength: they are shared with the
// resolver's other answers.
func rrsetKey(rrs []dns.RR, buf []byte) string {
	parts := make([][]byte, 0, len(rrs))
	var m dns.Msg
	var one [1]dns.RR
	m.Answer = one[:]
	for _, rr := range rrs {
		one[0] = rr
		wire, err := m.PackBuffer(buf)
		if err != nil {
			return "" // never kept: see Signer.sigs
		}
		rest := wire[msgHeaderLen:]
		parts = append(parts, bytes.Clone(rest[nameLen(rest):]))
	}
	slices.SortFunc(parts, bytes.Compare)
	var b strings.Builder
	writeLower(&b, rrs[0].Header().Name)
	for _, p := range parts {
		b.WriteByte(0)
		b.Write(p)
	}
	return b.String()
}

// writeLower writes name to b in ASCII lower case, without the copy
// strings.ToLower makes of a name with capitals.
func writeLower(b *strings.Builder, name string) {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
}

// msgHeaderLen is the length of a DNS message's header.
const msgHeaderLen = 12

// nameLen is the length of the uncompressed name at the start of wire.
func nameLen(wire []byte) int {
	off := 0
	for off < len(wire) && wire[off] != 0 {
		off += 1 + int(wire[off])
	}
	return off + 1
}
