package forward

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/internal/dnstest"
	"github.com/kubesky/kubesky/internal/kubeproc"
)

func TestTLSUpstreamsParse(t *testing.T) {
	tests := []struct {
		value, addr, name string // addr "": rejected
	}{
		{"tls://192.0.2.53#dns.example", "192.0.2.53:853", "dns.example"},
		{"tls://192.0.2.53:8853#dns.example", "192.0.2.53:8853", "dns.example"},
		{"tls://[2001:db8::53]#dns.example", "", ""}, // brackets need a port
		{"tls://[2001:db8::53]:853#dns.example", "[2001:db8::53]:853", "dns.example"},
		{"tls://2001:db8::53#dns.example", "[2001:db8::53]:853", "dns.example"},
		{"tls://192.0.2.53", "", ""},
		{"tls://192.0.2.53#", "", ""},
		{"tls://dns.example#dns.example", "", ""},
		{"192.0.2.53", "192.0.2.53:53", ""},
	}
	for _, tc := range tests {
		var p parsed
		ap, err := p.parseUpstream(tc.value)
		switch {
		case tc.addr == "" && err == nil:
			t.Errorf("%q: parsed as %s, want an error", tc.value, ap)
		case tc.addr != "" && (err != nil || ap.String() != tc.addr || p.tls[ap] != tc.name):
			t.Errorf("%q: %s, name %q, %v; want %s, name %q", tc.value, ap, p.tls[ap], err, tc.addr, tc.name)
		}
	}
}

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	accepted atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
	}
	return c, err
}

// startTLSUpstream serves DNS over TLS on 127.0.0.1, answering every A
// question with 192.0.2.1, with a certificate of a new CA for name; it
// returns the address, the CA's file and the listener.
func startTLSUpstream(t *testing.T, name string) (string, string, *countingListener) {
	t.Helper()
	ca, err := kubeproc.NewCA(t.TempDir(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := kubeproc.CertTemplate(name, time.Hour)
	tmpl.ExtKeyUsage, tmpl.DNSNames = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, []string{name}
	certFile, keyFile, err := ca.Issue("upstream", tmpl)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := &countingListener{Listener: tcp}
	h := dnstest.Reply(func(q *dns.Msg) *dns.Msg {
		r := new(dns.Msg).SetReply(q)
		r.Answer = []dns.RR{&dns.A{Hdr: dns.RR_Header{Name: q.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: net.IPv4(192, 0, 2, 1)}}
		return r
	})
	dnstest.Serve(t, &dns.Server{Listener: tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}}), Handler: h})
	return tcp.Addr().String(), ca.CertFile, ln
}

func TestATLSUpstreamAnswersOnOneReusedConnection(t *testing.T) {
	const name = "upstream.kubesky.test"
	addr, caFile, ln := startTLSUpstream(t, name)
	cfg := testConfig("tls://" + addr + "#" + name)
	cfg.CacheSize, cfg.UpstreamTLSCA = 0, caFile
	f, _, _ := testForwarder(t, cfg)
	for i := range 5 {
		resp := ask(t, f, "example.com.", dns.TypeA)
		if resp.Rcode != dns.RcodeSuccess || len(resp.Answer) != 1 {
			t.Fatalf("query %d: %v", i, resp)
		}
	}
	if n := ln.accepted.Load(); n != 1 {
		t.Fatalf("the upstream accepted %d connections for 5 queries, want 1", n)
	}
}

func TestATLSUpstreamWithAnotherNameIsNotTrusted(t *testing.T) {
	addr, caFile, _ := startTLSUpstream(t, "upstream.kubesky.test")
	cfg := testConfig("tls://" + addr + "#other.kubesky.test")
	cfg.UpstreamTLSCA = caFile
	f, _, _ := testForwarder(t, cfg)
	if resp := ask(t, f, "example.com.", dns.TypeA); resp.Rcode != dns.RcodeServerFailure {
		t.Fatalf("rcode %s, want SERVFAIL", dns.RcodeToString[resp.Rcode])
	}
}
