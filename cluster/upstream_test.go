package cluster

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/internal/dnstest"
	"github.com/kubesky/kubesky/internal/polltest"
)

func TestUpstreamAnswersItsNamesAndNXDOMAIN(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := pc.LocalAddr().String()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- serveUpstream(ctx, pc, ln) }()
	t.Cleanup(func() { cancel(); <-done })

	query := func(name string, qtype uint16) *dns.Msg {
		var reply *dns.Msg
		polltest.Within(t, 5*time.Second, "the upstream answering "+name, func() (err error) {
			reply, err = dnstest.Send("udp", addr, new(dns.Msg).SetQuestion(name, qtype))
			return err
		})
		return reply
	}
	if r := query("WWW.example.org.", dns.TypeA); len(r.Answer) != 1 || r.Answer[0].(*dns.A).A.String() != UpstreamNames["www.example.org."] {
		t.Errorf("www.example.org: %v", r)
	}
	if r := query("nowhere.example.net.", dns.TypeA); r.Rcode != dns.RcodeNameError {
		t.Errorf("nowhere.example.net: rcode %s, want NXDOMAIN", dns.RcodeToString[r.Rcode])
	}
	if r := query("dns.google.", dns.TypeAAAA); len(r.Answer) != 1 || r.Answer[0].(*dns.AAAA).AAAA.String() != "2001:4860:4860::8888" {
		t.Errorf("dns.google AAAA: %v", r)
	}
	for _, reverse := range []string{"8.8.8.8.in-addr.arpa.", "8.8.8.8.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.6.8.4.0.6.8.4.1.0.0.2.ip6.arpa."} {
		if r := query(reverse, dns.TypePTR); len(r.Answer) != 1 || r.Answer[0].(*dns.PTR).Ptr != "dns.google." {
			t.Errorf("PTR %s: %v", reverse, r)
		}
	}
	if r := query("123.2.0.192.in-addr.arpa.", dns.TypePTR); r.Rcode != dns.RcodeNameError {
		t.Errorf("PTR of an address it does not know: rcode %s, want NXDOMAIN", dns.RcodeToString[r.Rcode])
	}
	if r := query("www.example.org.", dns.TypeAAAA); r.Rcode != dns.RcodeSuccess || len(r.Answer) != 0 {
		t.Errorf("www.example.org AAAA: %v, want NODATA", r)
	}
}
