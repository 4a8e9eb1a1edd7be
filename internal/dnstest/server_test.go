package dnstest

import (
	"testing"

	"github.com/miekg/dns"
)

func TestAServerStartedForTheTestAnswersOverBothTransports(t *testing.T) {
	addr := StartServer(t, Reply(func(req *dns.Msg) *dns.Msg {
		resp := new(dns.Msg).SetReply(req)
		resp.Answer = []dns.RR{&dns.TXT{Hdr: dns.RR_Header{Name: req.Question[0].Name, Rrtype: dns.TypeTXT, Class: dns.ClassINET},
			Txt: []string{"hello"}}}
		return resp
	}))
	for _, proto := range []string{"udp", "tcp"} {
		t.Run("over "+proto, func(t *testing.T) {
			resp := Ask(t, proto, addr, "a.test.", dns.TypeTXT)
			CheckRecords(t, "answer", resp.Answer, []string{`a.test. 0 IN TXT "hello"`})
		})
	}
}

func TestAStoppedServerNoLongerAnswers(t *testing.T) {
	pc, l := ListenPair(t)
	l.Close()
	stop := Serve(t, &dns.Server{PacketConn: pc, Handler: Reply(func(req *dns.Msg) *dns.Msg { return new(dns.Msg).SetReply(req) })})
	Ask(t, "udp", pc.LocalAddr().String(), "a.test.", dns.TypeA)
	stop()
	if _, err := Send("udp", pc.LocalAddr().String(), new(dns.Msg).SetQuestion("a.test.", dns.TypeA)); err == nil {
		t.Fatal("an answer after stop")
	}
}
