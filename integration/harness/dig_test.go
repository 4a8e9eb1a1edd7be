package harness

import (
	"testing"

	"github.com/miekg/dns"
)

const digOutput = `
;; Got answer:
;; WARNING: .local is reserved for Multicast DNS
;; ->>HEADER<<- opcode: QUERY, status: NOERROR, id: 42362
;; flags: qr aa rd; QUERY: 1, ANSWER: 2, AUTHORITY: 0, ADDITIONAL: 1

;; OPT PSEUDOSECTION:
; EDNS: version: 0, flags:; udp: 4096
;; ANSWER SECTION:
web.default.svc.cluster.local. 30 IN	A	10.96.5.10
web.default.svc.cluster.local. 30 IN	A	10.96.5.11

`

func TestParseDig(t *testing.T) {
	res, err := ParseDig(digOutput)
	if err != nil {
		t.Fatal(err)
	}
	if res.Rcode != dns.RcodeSuccess || len(res.Answer) != 2 {
		t.Fatalf("rcode %d, %d answers", res.Rcode, len(res.Answer))
	}
	if a, ok := res.Answer[1].(*dns.A); !ok || a.A.String() != "10.96.5.11" {
		t.Fatalf("second answer %v", res.Answer[1])
	}
}

func TestParseDigNXDOMAIN(t *testing.T) {
	res, err := ParseDig(";; ->>HEADER<<- opcode: QUERY, status: NXDOMAIN, id: 1\n")
	if err != nil || res.Rcode != dns.RcodeNameError || len(res.Answer) != 0 {
		t.Fatalf("%+v, %v", res, err)
	}
}

func TestParseDigRejectsOutputWithoutStatus(t *testing.T) {
	if _, err := ParseDig(";; connection timed out; no servers could be reached\n"); err == nil {
		t.Fatal("want an error")
	}
}

func TestQueryAndDigRejectAnUnknownTransport(t *testing.T) {
	if _, err := Query("127.0.0.1:53", "sctp", "a.", dns.TypeA); err == nil {
		t.Error("Query over sctp: want an error")
	}
	if _, err := Dig(t.Context(), "127.0.0.1:53", "sctp", "a.", "A"); err == nil {
		t.Error("Dig over sctp: want an error")
	}
}
