package forward

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/skydns/tap"
)

// DNS over TLS upstreams (RFC 7858) are --upstream values
// "tls://ip[:port]#server.name" (port 853 by default): queries to them
// go over TLS, the certificate verified for server.name against the
// system's roots or --upstream-tls-ca. Each keeps a few idle connections
// for the next queries; one query at a time per connection.

// FlagUpstreamTLSCA names the CA file flag.
const FlagUpstreamTLSCA = "upstream-tls-ca"

const (
	tlsScheme = "tls://"
	// dotPort is DNS over TLS's port.
	dotPort = 853
	// dotMaxIdle bounds the idle connections kept per upstream.
	dotMaxIdle = 4
)

// parseUpstream reads an --upstream value: a plain server (parseServer) or
// a DNS over TLS one, whose server name it records in p.tls.
func (p *parsed) parseUpstream(s string) (netip.AddrPort, error) {
	rest, ok := strings.CutPrefix(s, tlsScheme)
	if !ok {
		return parseServer(s)
	}
	server, name, ok := strings.Cut(rest, "#")
	if _, isName := dns.IsDomainName(name); !ok || name == "" || !isName {
		return netip.AddrPort{}, errors.New("want tls://ip[:port]#server.name, the name the certificate is verified for")
	}
	ap, err := parseTLSServer(server)
	if err != nil {
		return netip.AddrPort{}, err
	}
	if p.tls == nil {
		p.tls = map[netip.AddrPort]string{}
	}
	p.tls[ap] = name
	return ap, nil
}

// parseTLSServer reads "ip" (port 853) or "ip:port".
func parseTLSServer(s string) (netip.AddrPort, error) {
	if addr, err := netip.ParseAddr(s); err == nil {
		return netip.AddrPortFrom(addr.Unmap(), dotPort), nil
	}
	return parseServer(s)
}

// loadRoots reads the PEM CA certificates of file; nil (the system's
// roots) when file is empty.
func loadRoots(file string) (*x509.CertPool, error) {
	if file == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", FlagUpstreamTLSCA, err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--%s %s: no PEM certificate in it", FlagUpstreamTLSCA, file)
	}
	return roots, nil
}

// dotUpstreams are the connection pools of the DNS over TLS upstreams,
// by address.
type dotUpstreams struct {
	mu    sync.Mutex // guards pools
	pools map[string]*dotPool
}

// set makes the pools of servers (address → server name) verifying
// against roots, keeping those that are unchanged.
func (d *dotUpstreams) set(servers map[netip.AddrPort]string, roots *x509.CertPool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pools == nil {
		d.pools = map[string]*dotPool{}
	}
	for ap, name := range servers {
		addr := ap.String()
		if old := d.pools[addr]; old != nil && old.tls.ServerName == name && old.tls.RootCAs.Equal(roots) {
			continue
		}
		d.pools[addr] = &dotPool{addr: addr, tls: &tls.Config{ServerName: name, RootCAs: roots, MinVersion: tls.VersionTLS12,
			NextProtos: []string{"dot"}, ClientSessionCache: tls.NewLRUClientSessionCache(dotMaxIdle)}}
	}
}

// pool is addr's pool; nil when addr is not a DNS over TLS upstream.
func (d *dotUpstreams) pool(addr string) *dotPool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.pools[addr]
}

// close closes every idle connection.
func (d *dotUpstreams) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, p := range d.pools {
		p.close()
	}
}

// exchangeTLS is exchange over TLS: it returns the reply and the
// attempt's result.
func (f *Forwarder) exchangeTLS(ctx context.Context, p *dotPool, q *dns.Msg) (*dns.Msg, string, error) {
	start := time.Now()
	r, err := p.exchange(ctx, q)
	f.tapExchange(p.addr, tap.TLS, q, r, start)
	if err == nil {
		err = checkReply(q, r)
	}
	if err != nil {
		return nil, classify(err), fmt.Errorf("DNS over TLS to %s (%s): %w", p.addr, p.tls.ServerName, err)
	}
	if failedRcode(r.Rcode) {
		return r, resultRcode, nil
	}
	return r, resultOK, nil
}

// probeExchange sends a health probe: over TLS to a DNS over TLS
// upstream, else over UDP.
func (f *Forwarder) probeExchange(ctx context.Context, m *dns.Msg, addr string) (*dns.Msg, error) {
	if p := f.dot.pool(addr); p != nil {
		return p.exchange(ctx, m)
	}
	r, _, err := f.udp.ExchangeContext(ctx, m, addr)
	return r, err
}
