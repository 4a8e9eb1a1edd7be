package dnsserver

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// tlsName is the name of selfSigned's certificate.
const tlsName = "dns.test"

// selfSigned is a certificate for tlsName and 127.0.0.1 signed by
// itself, and a pool trusting it.
func selfSigned(tb testing.TB) (tls.Certificate, *x509.CertPool) {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: tlsName},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: []string{tlsName}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}, pool
}

// startTLSServer starts a server with cfg on free 127.0.0.1 ports, DNS
// over TLS included, and returns it and a client config trusting it.
func startTLSServer(tb testing.TB, cfg Config) (*Server, *tls.Config) {
	tb.Helper()
	cert, pool := selfSigned(tb)
	cfg.Addr, cfg.TLSAddr, cfg.TLS = "127.0.0.1:0", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}}
	s, err := Start(cfg)
	if err != nil {
		tb.Fatalf("Start: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			tb.Errorf("Shutdown: %v", err)
		}
	})
	return s, &tls.Config{RootCAs: pool, ServerName: tlsName}
}

func TestServesDNSOverTLSLikeTCP(t *testing.T) {
	s, client := startTLSServer(t, Config{Responder: records(300)})
	c := &dns.Client{Net: "tcp-tls", TLSConfig: client, Timeout: 5 * time.Second}
	t.Run("a large answer comes whole", func(t *testing.T) {
		resp, _, err := c.Exchange(query("big.test.", dns.TypeA, 0), s.TLSAddr())
		if err != nil || resp.Truncated || len(resp.Answer) != 300 {
			t.Fatalf("%v: %d records, TC %v; want 300, no TC", err, len(resp.Answer), resp != nil && resp.Truncated)
		}
	})
	t.Run("a client expecting another name gets no answer", func(t *testing.T) {
		wrong := client.Clone()
		wrong.ServerName = "other.test"
		if _, _, err := (&dns.Client{Net: "tcp-tls", TLSConfig: wrong, Timeout: 5 * time.Second}).Exchange(query("big.test.", dns.TypeA, 0), s.TLSAddr()); err == nil {
			t.Fatal("answered a client expecting another name")
		}
	})
}

// BenchmarkAnswerOverTCP and BenchmarkAnswerOverDoT time one query and
// its answer on one connection kept open, over TCP and over TLS: the
// cost TLS adds to an answer once the handshake is done.
func BenchmarkAnswerOverTCP(b *testing.B) {
	s, _ := startTLSServer(b, Config{Responder: records(1)})
	c, err := dns.Dial("tcp", s.Addr())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	benchAnswers(b, c)
}

func BenchmarkAnswerOverDoT(b *testing.B) {
	s, client := startTLSServer(b, Config{Responder: records(1)})
	c, err := dns.DialWithTLS("tcp-tls", s.TLSAddr(), client)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	benchAnswers(b, c)
}

// benchAnswers sends queries on c one at a time, each waiting for its
// answer.
func benchAnswers(b *testing.B, c *dns.Conn) {
	q := query("big.test.", dns.TypeA, 1232)
	b.ReportAllocs()
	for b.Loop() {
		if err := c.WriteMsg(q); err != nil {
			b.Fatal(err)
		}
		if r, err := c.ReadMsg(); err != nil || len(r.Answer) != 1 {
			b.Fatalf("%v, %v", r, err)
		}
	}
}

func TestAnExchangeOverTLSSaysSo(t *testing.T) {
	exchanges := make(chan Exchange, 2)
	s, client := startTLSServer(t, Config{Responder: records(1), Observe: func(e Exchange) { exchanges <- e }})
	for _, c := range []struct {
		client *dns.Client
		addr   string
		tls    bool
	}{
		{&dns.Client{Net: "tcp", Timeout: 5 * time.Second}, s.Addr(), false},
		{&dns.Client{Net: "tcp-tls", TLSConfig: client, Timeout: 5 * time.Second}, s.TLSAddr(), true},
	} {
		if _, _, err := c.client.Exchange(query("one.test.", dns.TypeA, 0), c.addr); err != nil {
			t.Fatal(err)
		}
		if e := <-exchanges; e.Proto != "tcp" || e.TLS != c.tls {
			t.Errorf("%s: Proto %q, TLS %v; want tcp, %v", c.client.Net, e.Proto, e.TLS, c.tls)
		}
	}
}
