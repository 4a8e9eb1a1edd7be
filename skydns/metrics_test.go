package skydns

import (
	"testing"

	"github.com/miekg/dns"
)

func TestMsgLenIsZeroForAMessageThatCannotBeSized(t *testing.T) {
	if n := msgLen(&dns.Msg{Answer: []dns.RR{(*dns.A)(nil)}}); n != 0 {
		t.Errorf("msgLen of a message with a nil A record = %d, want 0", n)
	}
	if n := msgLen(new(dns.Msg).SetQuestion("a.test.", dns.TypeA)); n != 24 {
		t.Errorf("msgLen of a question for a.test. = %d, want 24 (12 header + 8 name + 4)", n)
	}
}
