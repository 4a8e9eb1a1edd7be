package dnstest

import (
	"testing"
	"time"

	"github.com/miekg/dns"
)

// Timeout bounds one exchange of Send, Exchange and Ask.
const Timeout = 5 * time.Second

// Send sends m over proto ("udp" or "tcp") to addr on a connected socket,
// so that a reply from another address is not seen, and returns the
// reply. A UDP reply may be up to 64 KiB long, or the EDNS size of m.
func Send(proto, addr string, m *dns.Msg) (*dns.Msg, error) {
	c := &dns.Client{Net: proto, Timeout: Timeout, UDPSize: dns.MaxMsgSize}
	resp, _, err := c.Exchange(m, addr)
	return resp, err
}

// Exchange is Send failing tb when there is no reply.
func Exchange(tb testing.TB, proto, addr string, m *dns.Msg) *dns.Msg {
	tb.Helper()
	resp, err := Send(proto, addr, m)
	if err != nil {
		tb.Fatalf("%s query %s to %s: %v", proto, question(m), addr, err)
	}
	return resp
}

// question is m's first question as "name TYPE", for messages.
func question(m *dns.Msg) string {
	if len(m.Question) == 0 {
		return "without a question"
	}
	return m.Question[0].Name + " " + dns.TypeToString[m.Question[0].Qtype]
}

// Ask is Exchange of one question for name and qtype, class IN.
func Ask(tb testing.TB, proto, addr, name string, qtype uint16) *dns.Msg {
	tb.Helper()
	return Exchange(tb, proto, addr, new(dns.Msg).SetQuestion(name, qtype))
}
