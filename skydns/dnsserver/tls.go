package dnsserver

import (
	"crypto/tls"
	"fmt"
	"net"

	"github.com/kubesky/kubesky/skydns/fastpath"
)

// DNS over TLS (RFC 7858) is TCP serving behind a TLS listener: the same
// limits (TCPMaxConnections counts the TLS connections apart), the same
// sessions and the same fast path. The handshake happens on a session's
// first read, so it must end within the first query's timeout.

// startTLS listens on cfg.TLSAddr and serves DNS over TLS there.
func startTLS(h *handler, cfg Config, fast *fastpath.Server) (*tcpServer, error) {
	ln, err := net.Listen("tcp", cfg.TLSAddr)
	if err != nil {
		return nil, fmt.Errorf("listening for DNS over TLS on %s: %w", cfg.TLSAddr, err)
	}
	s := newTCPServer(h, ln, cfg, fast)
	s.ln = tls.NewListener(s.ln, tlsConfig(cfg.TLS))
	s.start()
	return s, nil
}

// tlsConfig is c with TLS 1.2 at least and DoT's ALPN protocol ("dot").
func tlsConfig(c *tls.Config) *tls.Config {
	c = c.Clone()
	c.MinVersion = max(c.MinVersion, tls.VersionTLS12)
	if len(c.NextProtos) == 0 {
		c.NextProtos = []string{"dot"}
	}
	return c
}

// TLSAddr is the host:port DNS over TLS is served on; "" when it is not.
func (s *Server) TLSAddr() string {
	if s.tls == nil {
		return ""
	}
	return s.tls.ln.Addr().String()
}
