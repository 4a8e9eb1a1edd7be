package forward

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// caseHold is how long an upstream that did not keep the query name's
// case is sent plain names before 0x20 is tried on it again.
const caseHold = time.Hour

// cookieRotate is how long a client cookie is used before a fresh one
// replaces it (RFC 7873 section 4.1: a client changes its cookie now and
// then, so that it does not identify the client for long).
const cookieRotate = time.Hour

// peer is what the forwarder remembers of one upstream to make its replies
// hard to forge: its DNS cookies (RFC 7873) and whether it keeps the case of
// query names (0x20).
type peer struct {
	mu       sync.Mutex
	client   string    // guarded by mu; our client cookie for this upstream, 16 hex digits
	previous string    // guarded by mu; the client cookie before, still valid for queries in flight
	rotated  time.Time // guarded by mu; when client was made
	server   string    // guarded by mu; the upstream's last server cookie for client, hex; "": none yet
	cookies  bool      // guarded by mu; the upstream has sent cookies
	noCase   time.Time // guarded by mu; until then names go out in plain case
}

// peers maps upstream addresses to their peer.
type peers struct {
	mu sync.Mutex
	m  map[string]*peer // guarded by mu
}

// get returns addr's peer, made on first use; its first client cookie is
// made with its first query.
func (ps *peers) get(addr string) *peer {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if p, ok := ps.m[addr]; ok {
		return p
	}
	if ps.m == nil {
		ps.m = map[string]*peer{}
	}
	p := &peer{}
	ps.m[addr] = p
	return p
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand, Go 1.24)
	return b
}

// cookie is the COOKIE option to send at now: the client cookie and, once
// known, the server's. A client cookie cookieRotate old is replaced by a
// fresh one, sent alone until the upstream answers it with a server
// cookie of its own.
func (p *peer) cookie(now time.Time) *dns.EDNS0_COOKIE {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.client == "" || now.Sub(p.rotated) >= cookieRotate {
		p.previous, p.client, p.server, p.rotated = p.client, hex.EncodeToString(randomBytes(8)), "", now
	}
	return &dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: p.client + p.server}
}

// checkCookie says why r's cookie does not show that it answers our query
// ("" when it does), and remembers the server cookie it carries. A reply
// without a cookie is taken only from an upstream that has not sent one
// yet (it does not do cookies); a reply with a client cookie other than
// ours (the current one, or the one before for a query sent before it
// changed), never.
func (p *peer) checkCookie(r *dns.Msg) string {
	c := strings.ToLower(cookieOf(r))
	p.mu.Lock()
	defer p.mu.Unlock()
	if c == p.client || (c == p.previous && c != "") {
		// Our client cookie alone, echoed back with the rest of the OPT
		// record by a server that does not do cookies (CoreDNS's hosts
		// plugin does): no cookie.
		c = ""
	}
	switch {
	case c == "" && p.cookies:
		return ignoredNoCookie
	case c == "":
		return ""
	case len(c) < 16+16 || len(c) > 16+64 || (c[:16] != p.client && c[:16] != p.previous):
		return ignoredCookie
	}
	p.cookies = true
	if c[:16] == p.client {
		p.server = c[16:]
	}
	return ""
}

// forgetServerCookie is called when an upstream that had sent cookies
// sent a reply without one and nothing else came: it may have stopped doing
// cookies, so the next reply without one is taken.
func (p *peer) forgetServerCookie() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.server, p.cookies = "", false
}

// cookieOf returns the COOKIE option's value in r, hex; "" when none.
func cookieOf(r *dns.Msg) string {
	opt := r.IsEdns0()
	if opt == nil {
		return ""
	}
	for _, o := range opt.Option {
		if c, ok := o.(*dns.EDNS0_COOKIE); ok {
			return c.Cookie
		}
	}
	return ""
}

// mixCase reports whether the next query's name goes out in random case.
func (p *peer) mixCase(now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !now.Before(p.noCase)
}

// caseLost records that the upstream answered with the name's case changed.
func (p *peer) caseLost(now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.noCase = now.Add(caseHold)
}
