package main

import (
	"net"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestLinkDelaysAndCutsQueries runs the link in front of a miekg/dns
// server on 127.0.0.1: an answer comes through, not before the delay,
// and nothing comes through while the link is cut.
func TestLinkDelaysAndCutsQueries(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg).SetReply(r)
		m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: r.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 5}, A: net.IPv4(10, 0, 0, 1)})
		w.WriteMsg(m)
	})}
	go srv.ActivateAndServe()
	t.Cleanup(func() { srv.Shutdown() })
	l, err := startLink(pc.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.close)
	c := &dns.Client{Timeout: time.Second}
	q := new(dns.Msg).SetQuestion("n0000001.ext.", dns.TypeA)
	ask := func() (time.Duration, error) {
		start := time.Now()
		_, _, err := c.Exchange(q, l.addr())
		return time.Since(start), err
	}
	if _, err := ask(); err != nil {
		t.Fatalf("no answer through the link: %v", err)
	}
	l.setDelay(50 * time.Millisecond)
	if took, err := ask(); err != nil || took < 50*time.Millisecond {
		t.Fatalf("with a 50ms delay: %v after %s", err, took)
	}
	l.cut.Store(true)
	if _, err := ask(); err == nil {
		t.Fatal("an answer came through the cut link")
	}
	l.cut.Store(false)
	if _, err := ask(); err != nil {
		t.Fatalf("no answer once the link is back: %v", err)
	}
}
