package forward

import (
	"context"
	"crypto/tls"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// dotPool holds the idle TLS connections to one upstream.
type dotPool struct {
	addr string
	tls  *tls.Config

	mu   sync.Mutex // guards idle
	idle []*dns.Conn
}

// exchange sends q on an idle connection, or a new one, and reads the
// reply. A reused connection that fails (the upstream closed it while
// idle) is replaced by a new one, once.
func (p *dotPool) exchange(ctx context.Context, q *dns.Msg) (*dns.Msg, error) {
	c := p.take()
	if c != nil {
		if r, err := roundTrip(ctx, c, q); err == nil {
			p.put(c)
			return r, nil
		}
		c.Close()
	}
	c, err := p.dial(ctx)
	if err != nil {
		return nil, err
	}
	r, err := roundTrip(ctx, c, q)
	if err != nil {
		c.Close()
		return nil, err
	}
	p.put(c)
	return r, nil
}

// dial connects and does the TLS handshake, verifying the certificate.
func (p *dotPool) dial(ctx context.Context) (*dns.Conn, error) {
	d := tls.Dialer{Config: p.tls}
	c, err := d.DialContext(ctx, "tcp", p.addr)
	if err != nil {
		return nil, err
	}
	return &dns.Conn{Conn: c}, nil
}

// roundTrip writes q on c and reads its reply within ctx's deadline,
// skipping replies to earlier queries that gave up.
func roundTrip(ctx context.Context, c *dns.Conn, q *dns.Msg) (*dns.Msg, error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(DefaultConfig().ForwardTimeout)
	}
	c.SetDeadline(deadline)
	if err := c.WriteMsg(q); err != nil {
		return nil, err
	}
	for {
		r, err := c.ReadMsg()
		if err != nil || r.Id == q.Id {
			return r, err
		}
	}
}

// take returns an idle connection, or nil.
func (p *dotPool) take() *dns.Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.idle)
	if n == 0 {
		return nil
	}
	c := p.idle[n-1]
	p.idle = p.idle[:n-1]
	return c
}

// put keeps c for the next query, or closes it when enough are idle.
func (p *dotPool) put(c *dns.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.idle) >= dotMaxIdle {
		c.Close()
		return
	}
	p.idle = append(p.idle, c)
}

// close closes the idle connections.
func (p *dotPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.idle {
		c.Close()
	}
	p.idle = nil
}
