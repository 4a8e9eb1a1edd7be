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

	query := func(name string) *dns.Msg {
		var reply *dns.Msg
		polltest.Within(t, 5*time.Second, "the upstream answering "+name, func() (err error) {
			reply, err = dnstest.Send("udp", addr, new(dns.Msg).SetQuestion(name, dns.TypeA))
			return err
		})
		return reply
	}
	if r := query("WWW.example.org."); len(r.Answer) != 1 || r.Answer[0].(*dns.A).A.String() != UpstreamNames["www.example.org."] {
		t.Errorf("www.example.org: %v", r)
	}
	if r := query("nowhere.example.net."); r.Rcode != dns.RcodeNameError {
		t.Errorf("nowhere.example.net: rcode %s, want NXDOMAIN", dns.RcodeToString[r.Rcode])
	}
}
