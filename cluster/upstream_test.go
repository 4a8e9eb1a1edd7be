package cluster

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/miekg/dns"
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
		m := new(dns.Msg)
		m.SetQuestion(name, dns.TypeA)
		var reply *dns.Msg
		deadline := time.Now().Add(5 * time.Second)
		for {
			reply, _, err = (&dns.Client{Timeout: time.Second}).Exchange(m, addr)
			if err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond) // the polling interval while the server starts
		}
		if err != nil {
			t.Fatal(err)
		}
		return reply
	}
	if r := query("WWW.example.org."); len(r.Answer) != 1 || r.Answer[0].(*dns.A).A.String() != UpstreamNames["www.example.org."] {
		t.Errorf("www.example.org: %v", r)
	}
	if r := query("nowhere.example.net."); r.Rcode != dns.RcodeNameError {
		t.Errorf("nowhere.example.net: rcode %s, want NXDOMAIN", dns.RcodeToString[r.Rcode])
	}
}
