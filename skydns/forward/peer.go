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

// peer is what the forwarder remembers of one upstream to make its replies
// hard to forge: its DNS cookies (RFC 7873) and whether it keeps the case of
// query names (0x20).
type peer struct {
	client string // our client cookie for this upstream, 16 hex digits

	mu     sync.Mutex
	server string    // guarded by mu; the upstream's last server cookie, hex; "": none yet
	noCase time.Time // guarded by mu; until then names go out in plain case
}

// peers maps upstream addresses to their peer.
type peers struct {
	mu sync.Mutex
	m  map[string]*peer // guarded by mu
}

// get returns addr's peer, made on first use with a fresh random client
// cookie.
func (ps *peers) get(addr string) *peer {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if p, ok := ps.m[addr]; ok {
		return p
	}
	if ps.m == nil {
		ps.m = map[string]*peer{}
	}
	p := &peer{client: hex.EncodeToString(randomBytes(8))}
	ps.m[addr] = p
	return p
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand, Go 1.24)
	return b
}

// cookie is the COOKIE option to send: the client cookie and, once known,
// the server's.
func (p *peer) cookie() *dns.EDNS0_COOKIE {
	p.mu.Lock()
	defer p.mu.Unlock()
	return &dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: p.client + p.server}
}

// checkCookie says why r's cookie does not show that it answers our query
// ("" when it does), and remembers the server cookie it carries. A reply
// without a cookie is taken only from an upstream that has not sent one
// yet (it does not do cookies); a reply with a client cookie other than
// ours, never.
func (p *peer) checkCookie(r *dns.Msg) string {
	c := cookieOf(r)
	p.mu.Lock()
	defer p.mu.Unlock()
	if strings.EqualFold(c, p.client) {
		// Our client cookie alone, echoed back with the rest of the OPT
		// record by a server that does not do cookies (CoreDNS's hosts
		// plugin does): no cookie.
		c = ""
	}
	switch {
	case c == "" && p.server != "":
		return ignoredNoCookie
	case c == "":
		return ""
	case len(c) < 16+16 || len(c) > 16+64 || !strings.EqualFold(c[:16], p.client):
		return ignoredCookie
	}
	p.server = strings.ToLower(c[16:])
	return ""
}

// forgetServerCookie is called when an upstream that had sent cookies
// sent a reply without one and nothing else came: it may have stopped doing
// cookies, so the next reply without one is taken.
func (p *peer) forgetServerCookie() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.server = ""
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
